import { ApiError } from '../../../shared/errors/errors.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import type { WebhookEndpoint } from '../../../shared/webhook.js'
import type { Principal } from '../../root-keys/root-key-auth.js'
import { endpointNotFound, reachableEndpoint, type EndpointAction } from './endpoint-access.js'

/** How many times a change is made again from a fresh read when other writes keep landing first. */
export const ENDPOINT_CHANGE_TRIES = 3

/** An endpoint as it was read and as a change left it. */
export interface EndpointChange {
  before: WebhookEndpoint
  after: WebhookEndpoint
}

/**
 * Reads the endpoint (reachableEndpoint: 403, then 404), makes `change` of it (which checks what it must against the
 * copy it is given) and stores the result only if no other write landed in between (the store compares revisions).
 * If one did, the change is made again, checks and all, from the endpoint as that write left it, at most
 * ENDPOINT_CHANGE_TRIES times, then `409 CONFLICT`: a change made from a stale copy never undoes another (a
 * description written back with the `enabled: true` of before an admin's disable, a secret rotated back out).
 */
export async function changeEndpoint(
  store: Pick<WebhookStore, 'getEndpoint' | 'replaceEndpoint'>,
  principal: Principal,
  endpointId: string,
  action: EndpointAction,
  change: (before: WebhookEndpoint) => Promise<WebhookEndpoint> | WebhookEndpoint,
): Promise<EndpointChange> {
  for (let tries = 0; tries < ENDPOINT_CHANGE_TRIES; tries++) {
    const before = await reachableEndpoint(store, principal, endpointId, action)
    const after = await change(before)
    const outcome = await store.replaceEndpoint({ ...after, revision: before.revision ?? 0 })
    if (outcome === 'gone') throw endpointNotFound(endpointId)
    if (outcome === 'replaced') return { before, after }
  }
  throw new ApiError(
    'CONFLICT',
    `webhook endpoint ${endpointId} kept changing while this change was made: read it and try again`,
  )
}
