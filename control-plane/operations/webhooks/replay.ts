import { ApiError, invalid, notFound } from '../../../shared/errors.js'
import type { WebhookEvent } from '../../../shared/webhook.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { reachableEndpoint } from '../../webhooks/endpoint-access.js'

/** Events replayed by one call at most: the oldest first from `since`; call again from the last one's time for more. */
export const REPLAY_MAX = 1_000

/** What webhooks.replay is given: one event, or every kept event since a time. */
export type ReplayInput = { endpointId: string; eventId: string } | { endpointId: string; since: number }

/**
 * Sends kept events to the endpoint again (its `replay` permission): one event by id, or each it subscribes to from
 * `since` on. A replayed event keeps its id (`webhook-id`), so receivers that have it drop it; one still queued for
 * the endpoint is not queued twice. Events are kept for the retry window and a day. What the endpoint would not be
 * sent is refused rather than answered as queued (the worker drops it unsent): any event while the endpoint is
 * disabled (412), an event of a type it does not subscribe to (400).
 */
export async function replay(deps: ControlPlaneDeps, caller: Caller, input: ReplayInput): Promise<{ queued: number }> {
  const { webhooks } = deps.store
  const endpoint = await reachableEndpoint(webhooks, caller.principal, input.endpointId, 'replay')
  if (!endpoint.enabled)
    throw new ApiError(
      'PRECONDITION_FAILED',
      `webhook endpoint ${endpoint.id} is disabled: enable it (webhooks.updateEndpoint) to send it events`,
    )
  const wanted = (event: WebhookEvent) => endpoint.eventTypes.length === 0 || endpoint.eventTypes.includes(event.type)
  let events: WebhookEvent[]
  if ('eventId' in input) {
    const event = await webhooks.getEvent(input.eventId)
    if (!event)
      throw notFound(
        'webhookEvent',
        `webhook event ${input.eventId} not found (events are kept for the retry window and a day)`,
      )
    if (!wanted(event))
      throw invalid('eventId', `is a ${event.type} event, which webhook endpoint ${endpoint.id} does not subscribe to`)
    events = [event]
  } else {
    if (input.since > deps.clock.now()) throw invalid('since', 'is in the future')
    events = (await webhooks.listEvents(input.since, REPLAY_MAX)).filter(wanted)
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
