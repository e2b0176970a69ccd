import { ApiError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { MAX_WEBHOOK_ENDPOINTS, type WebhookEndpoint, type WebhookEventType } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireAction } from '../root-keys/root-key-auth.js'
import { checkEndpointUrl } from './delivery/address-policy.js'
import { requireReadsOf } from './endpoints/endpoint-reads.js'
import { refuseTypesOutOfScope, requireApisExist } from './endpoints/endpoint-scope.js'
import { endpointView } from './endpoints/endpoint-view.js'
import { newWebhookSecret } from './webhook-secret.js'
import { placeMissingCursors } from './events/webhook-cursors.js'
import { checkExportScope, EXPORT_EVENT_TYPES, newExport, type ExportInput } from './exports/export-settings.js'

export interface CreateEndpointInput {
  url: string
  description?: string | undefined
  /** The event types it receives; empty or absent: every type but the opt-in ones (webhook.ts). */
  eventTypes?: readonly WebhookEventType[] | undefined
  /** The apis whose events it receives; empty or absent: every api's, and the events about no api. */
  apiIds?: readonly string[] | undefined
  enabled?: boolean | undefined
  /** Makes it a meter export (exports/export-settings.ts): usage.hourly only, of some apis. */
  export?: ExportInput | undefined
}

/**
 * A new webhook endpoint, with its first signing secret (in the answer this once): `webhook.*.create_endpoint` and the
 * rights to read what it will be sent (webhooks/endpoint-reads.ts), then its scope and URL (400), its apis (404),
 * then room for it (at most MAX_WEBHOOK_ENDPOINTS: every event goes to each).
 * Two creates at once may both find the last place: the bound is one of cost, not of safety.
 */
export async function createEndpoint(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateEndpointInput,
): Promise<WebhookEndpoint> {
  const { principal } = caller
  requireAction(principal, 'webhook', '*', 'create_endpoint')
  const eventTypes =
    input.export !== undefined && input.eventTypes === undefined ? EXPORT_EVENT_TYPES : input.eventTypes
  const scope = { eventTypes: [...new Set(eventTypes ?? [])], apiIds: [...new Set(input.apiIds ?? [])] }
  requireReadsOf(principal, scope)
  if (input.export !== undefined) checkExportScope(scope)
  refuseTypesOutOfScope(scope, 'eventTypes')
  const url = await checkEndpointUrl(input.url, deps.webhookPolicy, deps.hostLookup)
  await requireApisExist(deps.store.keys, scope.apiIds)
  if ((await deps.store.webhooks.listEndpoints()).length >= MAX_WEBHOOK_ENDPOINTS)
    throw new ApiError(
      'PRECONDITION_FAILED',
      `there are ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints already, the most there can be: delete one first`,
    )
  const now = deps.clock.now()
  const id = newId('whep', now)
  const endpoint: WebhookEndpoint = {
    id,
    url,
    ...(input.description === undefined ? {} : { description: input.description }),
    ...scope,
    enabled: input.enabled ?? true,
    secrets: [newWebhookSecret(now)],
    createdAt: now,
    receivingSince: now,
    ...(input.export === undefined ? {} : { export: newExport(input.export, deps.secrets, id) }),
  }
  // Cursors first: every write once the endpoint exists is then news to it, whenever the deriver next looks.
  await placeMissingCursors(deps.store.changes, deps.store.webhooks)
  await deps.store.webhooks.createEndpoint(endpoint)
  await deps.audit.record(caller, 'webhooks.createEndpoint', { after: endpointView(endpoint) })
  caller.log.info({ endpointId: endpoint.id, rootKeyId: principal.rootKeyId }, 'webhook endpoint created')
  return endpoint
}
