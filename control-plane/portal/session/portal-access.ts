import type { ResourceAction } from '../../../shared/root-keys/root-key-actions.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { portalNotFound } from '../portal-records.js'
import type { PortalRecord } from '../portal-record.js'
import { may } from '../../root-keys/root-key-auth.js'

/**
 * The portal a root-key call names (id or slug), if the root key may do `action` on it; otherwise Unkey's 404, the
 * same whether the portal exists or not: a root key without rights on a portal learns nothing of it.
 */
export async function requirePortal(
  deps: Pick<ControlPlaneDeps, 'portals'>,
  caller: Caller,
  named: string,
  action: ResourceAction<'portal'>,
): Promise<PortalRecord> {
  const portal = await deps.portals.find(named)
  if (!portal || !may(caller.principal, 'portal', portal.id, action)) throw portalNotFound()
  return portal
}
