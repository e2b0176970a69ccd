import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { endpointNotFound, reachableEndpoint } from './endpoints/endpoint-access.js'
import { endpointView } from './endpoints/endpoint-view.js'

/**
 * Deletes the webhook endpoint `endpointId` with its delivery log and dead letters (403, then 404): nothing more is
 * sent to it, deliveries queued for it are dropped when they come due.
 */
export async function deleteEndpoint(deps: ControlPlaneDeps, caller: Caller, endpointId: string): Promise<void> {
  const { principal } = caller
  const endpoint = await reachableEndpoint(deps.store.webhooks, principal, endpointId, 'delete_endpoint')
  // Deleted by another call since it was read: that call's delete is the one audited.
  if (!(await deps.store.webhooks.deleteEndpoint(endpoint.id))) throw endpointNotFound(endpointId)
  await deps.audit.record(caller, 'webhooks.deleteEndpoint', { before: endpointView(endpoint) })
  caller.log.info({ endpointId, rootKeyId: principal.rootKeyId }, 'webhook endpoint deleted')
}
