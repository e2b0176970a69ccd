import { systemClock, type Clock } from '../../clock.js'
import type { PortalSession } from '../../portal/portal.js'
import type { PortalSessionStore } from './portal-session-store.js'

interface Held {
  session: PortalSession
  codeHash: string
  tokenHash?: string
}

// Expired sessions are swept when this many are held: minting many cannot grow the maps unseen.
const SWEEP_AT = 10_000

/** Portal sessions in process memory (the embedded default), expiring on `clock`. */
export class MemoryPortalSessionStore implements PortalSessionStore {
  private readonly sessions = new Map<string, Held>()
  private readonly byCode = new Map<string, string>()
  private readonly byToken = new Map<string, string>()

  constructor(private readonly clock: Clock = systemClock) {}

  async createSession(session: PortalSession, codeHash: string): Promise<void> {
    if (this.sessions.size >= SWEEP_AT) this.sweep(this.clock.now())
    this.sessions.set(session.id, { session: structuredClone(session), codeHash })
    this.byCode.set(codeHash, session.id)
  }

  async exchangeCode(
    codeHash: string,
    tokenHash: string,
    nowMs: number,
    tokenExpiresAt: number,
  ): Promise<PortalSession | null> {
    const id = this.byCode.get(codeHash)
    if (id === undefined) return null
    this.byCode.delete(codeHash)
    const held = this.sessions.get(id)
    if (!held) return null
    const { session } = held
    if (session.revokedAt !== undefined || session.tokenExpiresAt !== undefined || nowMs >= session.codeExpiresAt)
      return null
    session.tokenExpiresAt = tokenExpiresAt
    held.tokenHash = tokenHash
    this.byToken.set(tokenHash, id)
    return structuredClone(session)
  }

  async sessionOfToken(tokenHash: string, nowMs: number): Promise<PortalSession | null> {
    const id = this.byToken.get(tokenHash)
    const held = id === undefined ? undefined : this.sessions.get(id)
    if (!held || held.tokenHash !== tokenHash) return null
    const { session } = held
    if (session.revokedAt !== undefined || session.tokenExpiresAt === undefined || nowMs >= session.tokenExpiresAt)
      return null
    return structuredClone(session)
  }

  async getSession(id: string, nowMs: number): Promise<PortalSession | null> {
    const held = this.sessions.get(id)
    if (!held || expiresAt(held.session) <= nowMs) return null
    return structuredClone(held.session)
  }

  async revokeSession(id: string, nowMs: number): Promise<PortalSession | null> {
    const held = this.sessions.get(id)
    if (!held || expiresAt(held.session) <= nowMs) return null
    const before = structuredClone(held.session)
    held.session.revokedAt ??= nowMs
    this.byCode.delete(held.codeHash)
    if (held.tokenHash !== undefined) this.byToken.delete(held.tokenHash)
    return before
  }

  private sweep(now: number): void {
    for (const [id, held] of this.sessions) {
      if (expiresAt(held.session) > now) continue
      this.sessions.delete(id)
      this.byCode.delete(held.codeHash)
      if (held.tokenHash !== undefined) this.byToken.delete(held.tokenHash)
    }
  }
}

/** When a session is forgotten: with its token, or with its code if never exchanged. */
const expiresAt = (session: PortalSession) => session.tokenExpiresAt ?? session.codeExpiresAt
