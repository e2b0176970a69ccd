import { ApiError, invalid, notFound } from '../../../shared/errors.js'
import type { WebhookEvent } from '../../../shared/webhook.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { reachableEndpoint } from '../../webhooks/endpoint-access.js'
import { requireReadsOf } from '../../webhooks/endpoint-reads.js'
import { endpointTakes } from '../../webhooks/endpoint-wants.js'

/** Events replayed by one call at most: the oldest first from `since`; call again from the last one's time for more. */
export const REPLAY_MAX = 1_000

/** What webhooks.replay is given: one event, or every kept event since a time. */
export type ReplayInput = { endpointId: string; eventId: string } | { endpointId: string; since: number }

/**
 * Sends kept events to the endpoint again (its `replay` permission, and the rights to read what it is sent:
 * webhooks/endpoint-reads.ts): one event by id, or each it takes from `since` on. Only events from its creation on:
 * an endpoint never learns what happened before it existed. A replayed event keeps its id (`webhook-id`), so receivers
 * that have it drop it; one still queued for the endpoint is not queued twice. Events are kept for the retry window
 * and a day. What the endpoint would not be sent is refused rather than answered as queued (the worker drops it
 * unsent): any event while the endpoint is disabled (412), an event of a type or an api it does not take, or from
 * before it was created (400).
 */
export async function replay(deps: ControlPlaneDeps, caller: Caller, input: ReplayInput): Promise<{ queued: number }> {
  const { webhooks } = deps.store
  const endpoint = await reachableEndpoint(webhooks, caller.principal, input.endpointId, 'replay')
  requireReadsOf(caller.principal, endpoint)
  if (!endpoint.enabled)
    throw new ApiError(
      'PRECONDITION_FAILED',
      `webhook endpoint ${endpoint.id} is disabled: enable it (webhooks.updateEndpoint) to send it events`,
    )
  const wanted = (event: WebhookEvent) => event.at >= endpoint.createdAt && endpointTakes(endpoint, event)
  let events: WebhookEvent[]
  if ('eventId' in input) {
    const event = await webhooks.getEvent(input.eventId)
    if (!event)
      throw notFound(
        'webhookEvent',
        `webhook event ${input.eventId} not found (events are kept for the retry window and a day)`,
      )
    if (event.at < endpoint.createdAt)
      throw invalid('eventId', `happened before webhook endpoint ${endpoint.id} was created: it is never sent to it`)
    if (!wanted(event))
      throw invalid('eventId', `is a ${event.type} event that webhook endpoint ${endpoint.id} does not take`)
    events = [event]
  } else {
    if (input.since > deps.clock.now()) throw invalid('since', 'is in the future')
    events = (await webhooks.listEvents(Math.max(input.since, endpoint.createdAt), REPLAY_MAX)).filter(wanted)
  }
  const now = deps.clock.now()
  for (const event of events) await webhooks.enqueue(event, [endpoint.id], now)
  await deps.audit.record(caller, 'webhooks.replay', {
    context: {
      endpointId: endpoint.id,
      ...('eventId' in input ? { eventId: input.eventId } : { since: input.since }),
      queued: events.length,
    },
  })
  caller.log.info(
    { endpointId: endpoint.id, queued: events.length, rootKeyId: caller.principal.rootKeyId },
    'webhook events replayed',
  )
  return { queued: events.length }
}
