import { ApiError } from '../../../shared/errors/errors.js'
import { PORTAL_TOKEN_TTL_MS, type PortalSession } from '../../../shared/portal/portal.js'
import { newPortalSecret } from '../../../shared/portal/portal-secrets.js'
import { hashKey } from '../../../shared/keys/key-material.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'

/** One answer for a code that is unknown, expired, spent or of a revoked session (Unkey's words). */
const codeNotValid = () =>
  new ApiError('UNAUTHORIZED', 'Session is invalid, expired, or has already been used.', undefined, {
    problem: 'authentication/portal_session_not_found',
    credential: { kind: 'portal-session', refused: 'unknown' },
  })

/**
 * Exchanges a session's one-time code for its access token (24 hours), once: of two exchanges of a code, even at the
 * same moment, one wins and the other is refused (401). The token is answered this once; the store keeps its SHA-256.
 */
export async function exchangeCode(
  deps: Pick<ControlPlaneDeps, 'store' | 'clock' | 'portals'>,
  code: string,
): Promise<{ token: string; session: PortalSession }> {
  const now = deps.clock.now()
  const { secret: token, hash } = newPortalSecret('pat')
  const session = await deps.store.portalSessions.exchangeCode(hashKey(code), hash, now, now + PORTAL_TOKEN_TTL_MS)
  if (!session) throw codeNotValid()
  return { token, session }
}
