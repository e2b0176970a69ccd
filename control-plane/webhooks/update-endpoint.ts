import type { WebhookEndpoint, WebhookEventType } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { checkEndpointUrl } from './delivery/address-policy.js'
import { changeEndpoint } from './endpoints/endpoint-change.js'
import { requireReadsOf } from './endpoints/endpoint-reads.js'
import { refuseTypesOutOfScope, requireApisExist } from './endpoints/endpoint-scope.js'
import { endpointView } from './endpoints/endpoint-view.js'
import { changedExport, checkExportScope, type ExportChange } from './exports/export-settings.js'
import { invalid } from '../../shared/errors/errors.js'

/** What changes of an endpoint: each field given replaces the stored one, each left out stays. */
export interface UpdateEndpointInput {
  endpointId: string
  /** Checked again, as a new endpoint's is. */
  url?: string | undefined
  /** null clears it. */
  description?: string | null | undefined
  /** Empty: every type but the opt-in ones (webhook.ts). */
  eventTypes?: readonly WebhookEventType[] | undefined
  /** Empty: every api. */
  apiIds?: readonly string[] | undefined
  enabled?: boolean | undefined
  /** A meter export's settings to change (400 for an endpoint that is not one). */
  export?: ExportChange | undefined
}

/**
 * Changes a webhook endpoint (webhooks/endpoint-access.ts: 403, then 404). A change of what it is sent or where — its
 * URL, apis, event types, or enabling it — takes the rights to read what it is sent after the change
 * (webhooks/endpoint-reads.ts: 403); disabling it or changing its description does not. Then the scope and a new URL
 * are checked (400), and new apis (404). A new URL starts its `receivingSince` anew: a replay never sends the receiver
 * it now points at what was sent before; a meter export's is refused (400) unless its credential is given with it.
 * Its secrets stay as they are: webhooks.rotateSecret changes them. The change
 * is stored only over the endpoint it was made from (webhooks/endpoint-change.ts: made again from a fresh read when
 * another write landed first, 409 if they keep landing), so that it never writes back what another change undid.
 */
export async function updateEndpoint(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateEndpointInput,
): Promise<WebhookEndpoint> {
  const { principal } = caller
  const rescoped = input.apiIds !== undefined || input.eventTypes !== undefined
  const { before, after } = await changeEndpoint(
    deps.store.webhooks,
    principal,
    input.endpointId,
    'update_endpoint',
    async (before) => {
      const scope = {
        eventTypes: input.eventTypes === undefined ? before.eventTypes : [...new Set(input.eventTypes)],
        apiIds: input.apiIds === undefined ? (before.apiIds ?? []) : [...new Set(input.apiIds)],
      }
      // A new credential is a new place its usage goes to, as a new URL is.
      if (rescoped || input.url !== undefined || input.enabled === true || input.export !== undefined)
        requireReadsOf(principal, scope)
      if (before.export !== undefined) {
        checkExportScope(scope)
        // Its queued hours are of its apis as they were: new apis would leave them unsent (the worker sends an
        // endpoint only what it takes now), and sums over other apis under the same identifiers.
        if (JSON.stringify([...scope.apiIds].sort()) !== JSON.stringify([...(before.apiIds ?? [])].sort()))
          throw invalid('apiIds', "a meter export's apis are fixed: make another export for other apis")
      } else if (input.export !== undefined) throw invalid('export', 'the endpoint is not a meter export')
      if (rescoped) refuseTypesOutOfScope(scope, input.eventTypes === undefined ? 'apiIds' : 'eventTypes')
      const url =
        input.url === undefined ? before.url : await checkEndpointUrl(input.url, deps.webhookPolicy, deps.hostLookup)
      // The credential goes with every request to the URL: pointed elsewhere, it would be handed to whoever is there.
      if (before.export !== undefined && url !== before.url && input.export?.credential === undefined)
        throw invalid(
          'export.credential',
          "is needed with a new URL: a meter export's credential is sent only where it was given for",
        )
      if (input.apiIds !== undefined) await requireApisExist(deps.store.keys, scope.apiIds)
      const now = deps.clock.now()
      const changed: WebhookEndpoint = {
        ...before,
        url,
        ...scope,
        enabled: input.enabled ?? before.enabled,
        updatedAt: now,
        ...(url === before.url ? {} : { receivingSince: now }),
      }
      if (before.export !== undefined && input.export !== undefined)
        changed.export = changedExport(before.export, input.export, deps.secrets, before.id)
      if (input.description === null) delete changed.description
      else if (input.description !== undefined) changed.description = input.description
      return changed
    },
  )
  await deps.audit.record(caller, 'webhooks.updateEndpoint', {
    before: endpointView(before),
    after: endpointView(after),
  })
  caller.log.info({ endpointId: after.id, rootKeyId: principal.rootKeyId }, 'webhook endpoint updated')
  return after
}
