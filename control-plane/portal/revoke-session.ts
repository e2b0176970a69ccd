import { notFound } from '../../shared/errors/errors.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { may } from '../root-keys/root-key-auth.js'

/**
 * Ends a session at once: its cookie and its unspent code find nothing from now on. Needs
 * `portal.<its portal>.revoke_portal_session`; a session the root key may not revoke is as one that does not exist
 * (404). Revoking a revoked session changes nothing.
 */
export async function revokeSession(deps: ControlPlaneDeps, caller: Caller, sessionId: string): Promise<void> {
  const now = deps.clock.now()
  const session = await deps.store.portalSessions.getSession(sessionId, now)
  const missing = () => notFound('portal', `portal session ${sessionId} not found`)
  if (!session || !may(caller.principal, 'portal', session.portalId, 'revoke_portal_session')) throw missing()
  if (session.revokedAt !== undefined) return
  if (!(await deps.store.portalSessions.revokeSession(sessionId, now))) throw missing()
  caller.log.info({ portalSessionId: sessionId, rootKeyId: caller.principal.rootKeyId }, 'portal session revoked')
  await deps.audit.record(caller, 'portal.revokeSession', {
    before: { sessionId, portalId: session.portalId, externalId: session.externalId },
  })
}
