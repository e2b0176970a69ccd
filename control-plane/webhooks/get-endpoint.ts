import type { WebhookEndpoint } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { reachableEndpoint } from './endpoints/endpoint-access.js'

/** The webhook endpoint `endpointId`, for a root key that may read it (webhooks/endpoint-access.ts: 403, then 404). */
export async function getEndpoint(
  deps: ControlPlaneDeps,
  caller: Caller,
  endpointId: string,
): Promise<WebhookEndpoint> {
  return reachableEndpoint(deps.store.webhooks, caller.principal, endpointId, 'read_endpoint')
}
