/**
 * The customer portal (docs/portal.md): a page where an operator's customers manage their own keys, opened by a
 * session the operator's backend mints with a root key. A portal (control-plane/portal/portal-record.ts) names the
 * apis its sessions reach, its branding and the settings every key made through it gets; a session names one
 * identity (externalId) and what it may do.
 */
import type { PortalScope } from '../ui-shapes.js'

export { PORTAL_SCOPES, type PortalScope } from '../ui-shapes.js'

/** How long a session's one-time code can be exchanged, ms (Unkey's 15 minutes). */
export const PORTAL_CODE_TTL_MS = 15 * 60_000
/** How long a session's access token lasts once exchanged, ms (Unkey's 24 hours). */
export const PORTAL_TOKEN_TTL_MS = 24 * 3_600_000
/** The longest overlap a customer may give the old key when rolling it, ms. */
export const PORTAL_MAX_OVERLAP_MS = 7 * 24 * 3_600_000

/**
 * A session as stored: only the SHA-256 of its code and of its token are kept, never either. The code is exchanged
 * once for the token; the token authenticates the browser (an HttpOnly cookie) until it expires or is revoked.
 */
export interface PortalSession {
  /** `ps_…`: not a credential; safe to log. */
  id: string
  portalId: string
  externalId: string
  scopes: PortalScope[]
  /** The portal's apis this session reaches (all of them unless the minting call narrowed them). */
  apiIds: string[]
  preview: boolean
  returnUrl?: string
  /** The root key that minted it: the authority the session acts under, named in the audit log. */
  mintedBy: string
  createdAt: number
  codeExpiresAt: number
  /** Set once the code is exchanged. */
  tokenExpiresAt?: number
  revokedAt?: number
}
