import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { PortalSession } from '../../shared/portal/portal.js'
import type { PortalSessionStore } from '../../shared/store/portal-sessions/portal-session-store.js'

const hash = () => randomBytes(32).toString('base64url')
const NOW = 1_800_000_000_000

function newSession(overrides: Partial<PortalSession> = {}): PortalSession {
  return {
    id: `ps_${randomBytes(8).toString('hex')}`,
    portalId: 'portal_1',
    externalId: 'user_1',
    scopes: ['keys:read', 'keys:reroll'],
    apiIds: ['api_1', 'api_2'],
    preview: false,
    returnUrl: 'https://app.example/settings',
    mintedBy: 'root_1',
    createdAt: NOW,
    codeExpiresAt: NOW + 60_000,
    ...overrides,
  }
}

/** The portal sessions' contract (shared/store/portal-sessions/portal-session-store.ts), run on every store. */
export function portalSessionStoreContract(sessions: () => PortalSessionStore): void {
  describe('portal sessions', () => {
    it('exchanges a code once for a token that then finds the session, whole', async () => {
      const session = newSession()
      const [code, token] = [hash(), hash()]
      await sessions().createSession(session, code)
      expect(await sessions().sessionOfToken(token, NOW)).toBeNull()
      const exchanged = await sessions().exchangeCode(code, token, NOW + 1, NOW + 86_400_000)
      expect(exchanged).toEqual({ ...session, tokenExpiresAt: NOW + 86_400_000 })
      expect(await sessions().sessionOfToken(token, NOW + 2)).toEqual(exchanged)
      expect(await sessions().getSession(session.id, NOW + 2)).toEqual(exchanged)
      // Spent: neither the same token nor another gets it again.
      expect(await sessions().exchangeCode(code, token, NOW + 3, NOW + 86_400_000)).toBeNull()
      expect(await sessions().exchangeCode(code, hash(), NOW + 3, NOW + 86_400_000)).toBeNull()
    })

    it('gives one winner among exchanges made at once', async () => {
      const session = newSession()
      const code = hash()
      await sessions().createSession(session, code)
      const tokens = Array.from({ length: 8 }, hash)
      const won = await Promise.all(tokens.map((token) => sessions().exchangeCode(code, token, NOW, NOW + 1_000)))
      expect(won.filter((answer) => answer !== null)).toHaveLength(1)
      const finding = await Promise.all(tokens.map((token) => sessions().sessionOfToken(token, NOW)))
      expect(finding.filter((answer) => answer !== null)).toHaveLength(1)
    })

    it('refuses an unknown code, and a code exchanged at or after its expiry (spending it)', async () => {
      expect(await sessions().exchangeCode(hash(), hash(), NOW, NOW + 1_000)).toBeNull()
      const session = newSession()
      const code = hash()
      await sessions().createSession(session, code)
      expect(await sessions().exchangeCode(code, hash(), session.codeExpiresAt, NOW + 1_000_000)).toBeNull()
      expect(await sessions().exchangeCode(code, hash(), NOW, NOW + 1_000_000)).toBeNull()
    })

    it('stops finding a session by its token once the token has expired', async () => {
      const session = newSession()
      const [code, token] = [hash(), hash()]
      await sessions().createSession(session, code)
      await sessions().exchangeCode(code, token, NOW, NOW + 5_000)
      expect(await sessions().sessionOfToken(token, NOW + 4_999)).not.toBeNull()
      expect(await sessions().sessionOfToken(token, NOW + 5_000)).toBeNull()
      expect(await sessions().getSession(session.id, NOW + 5_000)).toBeNull()
    })

    it("keeps an exchanged session past its code's expiry, and a live code, while later creates forget the expired", async () => {
      const exchanged = newSession()
      const unspent = newSession({ codeExpiresAt: NOW + 600_000 })
      const expired = newSession()
      const [code, token, unspentCode] = [hash(), hash(), hash()]
      await sessions().createSession(exchanged, code)
      await sessions().createSession(unspent, unspentCode)
      await sessions().createSession(expired, hash())
      await sessions().exchangeCode(code, token, NOW, NOW + 3_600_000)
      // A create after the codes' expiry: it may forget what has expired by then, and nothing else.
      const later = NOW + 120_000
      await sessions().createSession(newSession({ createdAt: later, codeExpiresAt: later + 60_000 }), hash())
      expect(await sessions().sessionOfToken(token, later + 1)).toMatchObject({ id: exchanged.id })
      expect(await sessions().getSession(unspent.id, later + 1)).toMatchObject({ id: unspent.id })
      expect(await sessions().exchangeCode(unspentCode, hash(), later + 1, later + 60_000)).toMatchObject({
        id: unspent.id,
      })
      expect(await sessions().getSession(expired.id, later + 1)).toBeNull()
    })

    it('revokes a session: its token and its unspent code find nothing, and it reads as revoked', async () => {
      const used = newSession()
      const [code, token] = [hash(), hash()]
      await sessions().createSession(used, code)
      await sessions().exchangeCode(code, token, NOW, NOW + 60_000)
      const before = await sessions().revokeSession(used.id, NOW + 10)
      expect(before).toEqual({ ...used, tokenExpiresAt: NOW + 60_000 })
      expect(await sessions().sessionOfToken(token, NOW + 11)).toBeNull()
      expect(await sessions().getSession(used.id, NOW + 11)).toEqual({
        ...used,
        tokenExpiresAt: NOW + 60_000,
        revokedAt: NOW + 10,
      })
      // Revoking again keeps the first time.
      expect((await sessions().revokeSession(used.id, NOW + 20))?.revokedAt).toBe(NOW + 10)

      const unspent = newSession()
      const unspentCode = hash()
      await sessions().createSession(unspent, unspentCode)
      await sessions().revokeSession(unspent.id, NOW)
      expect(await sessions().exchangeCode(unspentCode, hash(), NOW + 1, NOW + 60_000)).toBeNull()
    })

    it('answers null for a session it does not hold', async () => {
      expect(await sessions().getSession('ps_none', NOW)).toBeNull()
      expect(await sessions().revokeSession('ps_none', NOW)).toBeNull()
      expect(await sessions().sessionOfToken(hash(), NOW)).toBeNull()
    })

    it('keeps a session with no return URL without one', async () => {
      const { returnUrl: _, ...bare } = newSession()
      const [code, token] = [hash(), hash()]
      await sessions().createSession(bare, code)
      await sessions().exchangeCode(code, token, NOW, NOW + 1_000)
      expect(await sessions().sessionOfToken(token, NOW)).not.toHaveProperty('returnUrl')
    })
  })
}
