import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { PortalRecord } from './portal-record.js'
import { requirePortal } from './session/portal-access.js'

/** A portal by id or slug, for a root key with `portal.<id>.read_portal` (404 otherwise). */
export async function getPortal(deps: ControlPlaneDeps, caller: Caller, named: string): Promise<PortalRecord> {
  return requirePortal(deps, caller, named, 'read_portal')
}
