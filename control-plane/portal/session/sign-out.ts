import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'

/** Ends the caller's own session (the page's "Sign out"): its cookie finds nothing from now on. */
export async function signOut(deps: Pick<ControlPlaneDeps, 'store' | 'clock'>, caller: PortalCaller): Promise<void> {
  await deps.store.portalSessions.revokeSession(caller.session.id, deps.clock.now())
  caller.log.info({ portalSessionId: caller.session.id }, 'portal session signed out')
}
