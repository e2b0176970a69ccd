import type { PortalSession } from '../../portal/portal.js'
import type { PortalSessionStore } from './portal-session-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { definePortalSessionScripts, type PortalSessionScripts } from './redis-portal-session-scripts.js'
import { storeCall } from '../redis/redis-store-call.js'

const KEYS = [redisKeys.portalSessions, redisKeys.portalCodes, redisKeys.portalTokens, redisKeys.portalExpiry] as const

/** Portal sessions on Redis: hashes in one slot, each step one script (redis-portal-session-scripts.ts). */
export class RedisPortalSessionStore implements PortalSessionStore {
  private readonly redis: RedisClient & PortalSessionScripts

  constructor(redis: RedisClient) {
    this.redis = definePortalSessionScripts(redis)
  }

  async createSession(session: PortalSession, codeHash: string): Promise<void> {
    const { tokenExpiresAt: _t, revokedAt: _r, ...created } = session
    await storeCall(() =>
      this.redis.portalCreateSession(
        ...KEYS,
        session.id,
        JSON.stringify(created),
        codeHash,
        String(session.codeExpiresAt),
        String(session.createdAt),
      ),
    )
  }

  async exchangeCode(
    codeHash: string,
    tokenHash: string,
    nowMs: number,
    tokenExpiresAt: number,
  ): Promise<PortalSession | null> {
    const json = await storeCall(() =>
      this.redis.portalExchangeCode(...KEYS, codeHash, tokenHash, String(nowMs), String(tokenExpiresAt)),
    )
    return json === null ? null : { ...(JSON.parse(json) as PortalSession), tokenExpiresAt }
  }

  async sessionOfToken(tokenHash: string, nowMs: number): Promise<PortalSession | null> {
    const found = await storeCall(() => this.redis.portalSessionOfToken(...KEYS, tokenHash))
    if (found === null) return null
    const [json, token, tokenExpires, revoked] = found as [string, string, string, string]
    if (token !== tokenHash || revoked !== '' || tokenExpires === '' || nowMs >= Number(tokenExpires)) return null
    return { ...(JSON.parse(json) as PortalSession), tokenExpiresAt: Number(tokenExpires) }
  }

  async getSession(id: string, nowMs: number): Promise<PortalSession | null> {
    const found = await storeCall(() => this.redis.portalGetSession(...KEYS, id, String(nowMs)))
    return found === null ? null : withState(found)
  }

  async revokeSession(id: string, nowMs: number): Promise<PortalSession | null> {
    const found = await storeCall(() => this.redis.portalRevokeSession(...KEYS, id, String(nowMs)))
    return found === null ? null : withState(found)
  }
}

/** A session's json with its state fields ([json, token expiry, revoked]) put back. */
function withState(found: string[]): PortalSession {
  const [json, tokenExpires, revoked] = found as [string, string, string]
  return {
    ...(JSON.parse(json) as PortalSession),
    ...(tokenExpires === '' ? {} : { tokenExpiresAt: Number(tokenExpires) }),
    ...(revoked === '' ? {} : { revokedAt: Number(revoked) }),
  }
}
