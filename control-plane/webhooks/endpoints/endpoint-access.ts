import { notFound } from '../../../shared/errors/errors.js'
import type { ResourceAction } from '../../../shared/root-keys/root-key-actions.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import type { WebhookEndpoint } from '../../../shared/webhook.js'
import { may, mayOnSome, requireAction, type Principal } from '../../root-keys/root-key-auth.js'

/** What a root key does to one endpoint (create_endpoint names none). */
export type EndpointAction = Exclude<ResourceAction<'webhook'>, 'create_endpoint'>

/** The one answer for an endpoint that does not exist and for one the root key may not reach. */
export const endpointNotFound = (endpointId: string) =>
  notFound('webhookEndpoint', `webhook endpoint ${endpointId} not found`)

/**
 * Refuses (403) a root key that may do `action` on no endpoint at all: it is told the permission it lacks, whichever
 * endpoint it names, so the refusal says nothing of which exist.
 */
export function requireSomeEndpointAction(principal: Principal, action: EndpointAction): void {
  if (!mayOnSome(principal, 'webhook', action)) requireAction(principal, 'webhook', '*', action)
}

/**
 * The endpoint `endpointId`, for a root key that may do `action` on it (`webhook.*.<action>` or
 * `webhook.<endpointId>.<action>`). A root key scoped to other endpoints gets the 404 of an endpoint that does not
 * exist, as a listing hides the endpoints it cannot reach: it learns nothing of those. One with the action on no
 * endpoint at all gets the 403 naming the permission.
 */
export async function reachableEndpoint(
  store: Pick<WebhookStore, 'getEndpoint'>,
  principal: Principal,
  endpointId: string,
  action: EndpointAction,
): Promise<WebhookEndpoint> {
  requireSomeEndpointAction(principal, action)
  const endpoint = may(principal, 'webhook', endpointId, action) ? await store.getEndpoint(endpointId) : null
  if (!endpoint) throw endpointNotFound(endpointId)
  return endpoint
}
