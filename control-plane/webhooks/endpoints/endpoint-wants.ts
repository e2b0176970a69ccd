import { typesTaken, type WebhookEndpoint, type WebhookEvent } from '../../../shared/webhook.js'

/** An endpoint's subscription: what decides which events it is sent. */
export type EndpointScope = Pick<WebhookEndpoint, 'eventTypes' | 'apiIds'>

/**
 * Whether the endpoint takes the event, enabled or not: a type it subscribes to (none named: every type but the opt-in
 * ones, webhook.ts) and, when it is scoped to apis, an event about one of them — its `data.apiId`. An event about no
 * api (identity.*, rootKey.*) is sent to unscoped endpoints only: a scope is a bound on what the endpoint learns,
 * never widened by an event's kind. An event summed over apis (usage.*: its `data.apiIds`, `*` for every api) goes to
 * the endpoints of exactly that scope, each of which is sent the sum over its own apis.
 */
export function endpointTakes(endpoint: EndpointScope, event: Pick<WebhookEvent, 'type' | 'data'>): boolean {
  if (!typesTaken(endpoint.eventTypes).includes(event.type)) return false
  const apiIds = endpoint.apiIds ?? []
  if (event.data.apiIds !== undefined) return JSON.stringify(event.data.apiIds) === JSON.stringify(scopeOfApis(apiIds))
  if (apiIds.length === 0) return true
  const { apiId } = event.data
  return typeof apiId === 'string' && apiIds.includes(apiId)
}

/**
 * Whether the endpoint is sent the event now: enabled, and it takes it. The one rule the deriver queues by and the
 * worker checks again when a delivery comes due (the endpoint may have changed meanwhile).
 */
export function endpointWants(endpoint: WebhookEndpoint, event: Pick<WebhookEvent, 'type' | 'data'>): boolean {
  return endpoint.enabled && endpointTakes(endpoint, event)
}

/**
 * The apis an endpoint scoped to `apiIds` is sent sums over, as an event summed over apis names them: `*` for an
 * unscoped endpoint, else the ids, sorted.
 */
export function scopeOfApis(apiIds: readonly string[]): string[] | '*' {
  return apiIds.length === 0 ? '*' : [...new Set(apiIds)].sort()
}
