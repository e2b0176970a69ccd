import type { WebhookEndpoint, WebhookEventType } from '../../../shared/webhook.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { checkEndpointUrl } from '../../webhooks/address-policy.js'
import { endpointNotFound, reachableEndpoint } from '../../webhooks/endpoint-access.js'
import { requireReadsOf } from '../../webhooks/endpoint-reads.js'
import { refuseTypesOutOfScope, requireApisExist } from '../../webhooks/endpoint-scope.js'
import { endpointView } from '../../webhooks/endpoint-view.js'

/** What changes of an endpoint: each field given replaces the stored one, each left out stays. */
export interface UpdateEndpointInput {
  endpointId: string
  /** Checked again, as a new endpoint's is. */
  url?: string | undefined
  /** null clears it. */
  description?: string | null | undefined
  /** Empty: every type. */
  eventTypes?: readonly WebhookEventType[] | undefined
  /** Empty: every api. */
  apiIds?: readonly string[] | undefined
  enabled?: boolean | undefined
}

/**
 * Changes a webhook endpoint (webhooks/endpoint-access.ts: 403, then 404). A change of what it is sent or where — its
 * URL, apis, event types, or enabling it — takes the rights to read what it is sent after the change
 * (webhooks/endpoint-reads.ts: 403); disabling it or changing its description does not. Then the scope and a new URL
 * are checked (400), and new apis (404). Its secrets stay as they are: webhooks.rotateSecret changes them. The
 * endpoint is read, then replaced whole: a write to it that lands in between (a rotation) is lost, since the store's
 * replaceEndpoint compares nothing.
 */
export async function updateEndpoint(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateEndpointInput,
): Promise<WebhookEndpoint> {
  const { principal } = caller
  const before = await reachableEndpoint(deps.store.webhooks, principal, input.endpointId, 'update_endpoint')
  const scope = {
    eventTypes: input.eventTypes === undefined ? before.eventTypes : [...new Set(input.eventTypes)],
    apiIds: input.apiIds === undefined ? (before.apiIds ?? []) : [...new Set(input.apiIds)],
  }
  const rescoped = input.apiIds !== undefined || input.eventTypes !== undefined
  if (rescoped || input.url !== undefined || input.enabled === true) requireReadsOf(principal, scope)
  if (rescoped) refuseTypesOutOfScope(scope, input.eventTypes === undefined ? 'apiIds' : 'eventTypes')
  const url =
    input.url === undefined ? before.url : await checkEndpointUrl(input.url, deps.webhookPolicy, deps.hostLookup)
  if (input.apiIds !== undefined) await requireApisExist(deps.store.keys, scope.apiIds)
  const after: WebhookEndpoint = {
    ...before,
    url,
    ...scope,
    enabled: input.enabled ?? before.enabled,
    updatedAt: deps.clock.now(),
  }
  if (input.description === null) delete after.description
  else if (input.description !== undefined) after.description = input.description
  if (!(await deps.store.webhooks.replaceEndpoint(after))) throw endpointNotFound(input.endpointId)
  await deps.audit.record(caller, 'webhooks.updateEndpoint', {
    before: endpointView(before),
    after: endpointView(after),
  })
  caller.log.info({ endpointId: after.id, rootKeyId: principal.rootKeyId }, 'webhook endpoint updated')
  return after
}
