import type { WebhookEndpoint, WebhookEventType } from '../../../shared/webhook.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { checkEndpointUrl } from '../../webhooks/address-policy.js'
import { endpointNotFound, reachableEndpoint } from '../../webhooks/endpoint-access.js'
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
  enabled?: boolean | undefined
}

/**
 * Changes a webhook endpoint (webhooks/endpoint-access.ts: 403, then 404; then a new URL is checked: 400). Its
 * secrets stay as they are: webhooks.rotateSecret changes them. The endpoint is read, then replaced whole: a write to
 * it that lands in between (a rotation) is lost, since the store's replaceEndpoint compares nothing.
 */
export async function updateEndpoint(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateEndpointInput,
): Promise<WebhookEndpoint> {
  const { principal } = caller
  const before = await reachableEndpoint(deps.store.webhooks, principal, input.endpointId, 'update_endpoint')
  const url =
    input.url === undefined ? before.url : await checkEndpointUrl(input.url, deps.webhookPolicy, deps.hostLookup)
  const after: WebhookEndpoint = {
    ...before,
    url,
    eventTypes: input.eventTypes === undefined ? before.eventTypes : [...new Set(input.eventTypes)],
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
