import type { PortalSession } from '../../portal/portal.js'

/**
 * Portal sessions (`store.portalSessions`; shared/portal/portal.ts): each found by its id, by the SHA-256 of its
 * one-time code until exchanged, and by the SHA-256 of its token until that expires. Codes and tokens themselves are
 * never stored. Records expire with their token (or their code, if never exchanged): the store holds only live ones.
 */
export interface PortalSessionStore {
  /** Stores a new session, findable by `codeHash` until `session.codeExpiresAt`. */
  createSession(session: PortalSession, codeHash: string): Promise<void>
  /**
   * Exchanges a code, once: if `codeHash` names a session whose code has not expired at `nowMs` and was never
   * exchanged, and that is not revoked, the code is spent, the session becomes findable by `tokenHash` until
   * `tokenExpiresAt`, and the session is answered as updated. Otherwise null, and nothing changes. One atomic step:
   * of two concurrent exchanges of a code, one wins.
   */
  exchangeCode(
    codeHash: string,
    tokenHash: string,
    nowMs: number,
    tokenExpiresAt: number,
  ): Promise<PortalSession | null>
  /** The session a token names, if it has neither expired at `nowMs` nor been revoked; else null. */
  sessionOfToken(tokenHash: string, nowMs: number): Promise<PortalSession | null>
  /** The session (revoked or not) unless it was forgotten at `nowMs`; else null. */
  getSession(id: string, nowMs: number): Promise<PortalSession | null>
  /**
   * Revokes a session: its token (and its code, if unspent) no longer finds it; it reads as revoked until it would
   * have expired. Answers the session as it was, or null if there is none at `nowMs`.
   */
  revokeSession(id: string, nowMs: number): Promise<PortalSession | null>
}
