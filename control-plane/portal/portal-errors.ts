import { ApiError } from '../../shared/errors/errors.js'

/**
 * One answer for a token that is unknown, expired, revoked, of a portal deleted since, or minted by a root key that no
 * longer authenticates (Unkey's words).
 */
export const sessionNotValid = () =>
  new ApiError('UNAUTHORIZED', 'The portal session is invalid or has expired.', undefined, {
    problem: 'authentication/portal_session_not_found',
    credential: { kind: 'portal-session', refused: 'unknown' },
  })

/** A portal its operator turned off: its sessions stop until it is on again (Unkey's words). */
export const portalDisabled = () => new ApiError('INSUFFICIENT_PERMISSIONS', 'Portal is disabled.')
