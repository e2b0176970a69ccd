import type { WebhookEndpoint } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { may } from '../root-keys/root-key-auth.js'
import { requireSomeEndpointAction } from './endpoints/endpoint-access.js'

/**
 * Every webhook endpoint the root key may read, in id order (oldest first): all of them with
 * `webhook.*.read_endpoint`, those it is scoped to with `webhook.<endpointId>.read_endpoint` (the others are not
 * shown, as if absent), a 403 with neither. Endpoints are few (MAX_WEBHOOK_ENDPOINTS): one page holds them all.
 */
export async function listEndpoints(deps: ControlPlaneDeps, caller: Caller): Promise<WebhookEndpoint[]> {
  const { principal } = caller
  requireSomeEndpointAction(principal, 'read_endpoint')
  const endpoints = await deps.store.webhooks.listEndpoints()
  return endpoints.filter((endpoint) => may(principal, 'webhook', endpoint.id, 'read_endpoint'))
}
