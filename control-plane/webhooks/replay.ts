import { ApiError, invalid, notFound } from '../../shared/errors/errors.js'
import type { WebhookStore } from '../../shared/store/webhooks/webhook-store.js'
import { madeAt, receivingSince, type WebhookEndpoint, type WebhookEvent } from '../../shared/webhook.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { reachableEndpoint } from './endpoints/endpoint-access.js'
import { requireReadsOf } from './endpoints/endpoint-reads.js'
import { endpointTakes } from './endpoints/endpoint-wants.js'
import { replayCursor, replayPosition } from './replay-cursor.js'

/** Events queued by one call at most: the oldest first; a `cursor` in the answer goes on from there. */
export const REPLAY_MAX = 1_000
/** Kept events one call looks at, at most, however few of them the endpoint takes: a bound on its work. */
export const REPLAY_SCAN = 10_000
/** Kept events read from the store at once. */
const REPLAY_PAGE = 1_000

/** What webhooks.replay is given: one event, every kept event since a time, or on from where a call stopped. */
export type ReplayInput =
  | { endpointId: string; eventId: string }
  | { endpointId: string; since: number }
  | { endpointId: string; cursor: string }

/** What a replay queued; `cursor` when it stopped before the newest kept event: where the next call goes on. */
export interface ReplayResult {
  queued: number
  cursor?: string
}

/**
 * Sends kept events to the endpoint again (its `replay` permission, and the rights to read what it is sent:
 * webhooks/endpoint-reads.ts): one event by id, or each it takes, in the order they were made, from `since` or on from
 * a `cursor`. Only events made since the endpoint began receiving at its URL (its creation, or its last change of
 * URL): a receiver never learns through a replay what was sent before it was pointed at. A replayed event keeps its id
 * (`webhook-id`), so receivers that have it drop it; one still queued for the endpoint is not queued twice. Events are
 * kept for the retry window and a day. What the endpoint would not be sent is refused rather than answered as queued
 * (the worker drops it unsent): any event while the endpoint is disabled (412), an event of a type or an api it does
 * not take, or made before it received at its URL (400).
 */
export async function replay(deps: ControlPlaneDeps, caller: Caller, input: ReplayInput): Promise<ReplayResult> {
  const { webhooks } = deps.store
  const endpoint = await reachableEndpoint(webhooks, caller.principal, input.endpointId, 'replay')
  requireReadsOf(caller.principal, endpoint)
  if (!endpoint.enabled)
    throw new ApiError(
      'PRECONDITION_FAILED',
      `webhook endpoint ${endpoint.id} is disabled: enable it (webhooks.updateEndpoint) to send it events`,
    )
  let result: { events: WebhookEvent[]; cursor?: string }
  if ('eventId' in input) result = { events: [await replayable(webhooks, endpoint, input.eventId)] }
  else if ('since' in input) {
    if (input.since > deps.clock.now()) throw invalid('since', 'is in the future')
    result = await eventsTaken(webhooks, endpoint, { sinceMs: input.since })
  } else {
    const { madeAt: sinceMs, eventId: afterId } = replayPosition(input.cursor)
    result = await eventsTaken(webhooks, endpoint, { sinceMs, afterId })
  }
  const { events, cursor } = result
  const now = deps.clock.now()
  for (const event of events) await webhooks.enqueue(event, [endpoint.id], now)
  const from =
    'eventId' in input
      ? { eventId: input.eventId }
      : 'since' in input
        ? { since: input.since }
        : { cursor: input.cursor }
  await deps.audit.record(caller, 'webhooks.replay', {
    context: { endpointId: endpoint.id, ...from, queued: events.length },
  })
  caller.log.info(
    { endpointId: endpoint.id, queued: events.length, rootKeyId: caller.principal.rootKeyId },
    'webhook events replayed',
  )
  return { queued: events.length, ...(cursor === undefined ? {} : { cursor }) }
}

/** The kept event `eventId`, if the endpoint would be sent it: 404 gone, 400 not taken or made before it received. */
async function replayable(webhooks: WebhookStore, endpoint: WebhookEndpoint, eventId: string): Promise<WebhookEvent> {
  const event = await webhooks.getEvent(eventId)
  if (!event)
    throw notFound(
      'webhookEvent',
      `webhook event ${eventId} not found (events are kept for the retry window and a day)`,
    )
  const since = receivingSince(endpoint)
  if (madeAt(event) < since)
    throw invalid(
      'eventId',
      `was made before webhook endpoint ${endpoint.id} began receiving at its URL ` +
        `(${new Date(since).toISOString()}): it is never sent to it`,
    )
  if (!endpointTakes(endpoint, event))
    throw invalid('eventId', `is a ${event.type} event that webhook endpoint ${endpoint.id} does not take`)
  return event
}

/**
 * The kept events the endpoint takes from `from` on (never from before it began receiving at its URL), oldest made
 * first: up to REPLAY_MAX of them, looking at REPLAY_SCAN at most, so that a scoped endpoint's events behind many of
 * other apis are reached over a few calls, each of bounded work. A cursor after the last event looked at when it
 * stopped before the newest.
 */
async function eventsTaken(
  webhooks: WebhookStore,
  endpoint: WebhookEndpoint,
  from: { sinceMs: number; afterId?: string },
): Promise<{ events: WebhookEvent[]; cursor?: string }> {
  const since = receivingSince(endpoint)
  const start = from.sinceMs < since ? { sinceMs: since } : from
  const events: WebhookEvent[] = []
  let last: WebhookEvent | undefined
  let looked = 0
  while (looked < REPLAY_SCAN) {
    const asked = Math.min(REPLAY_PAGE, REPLAY_SCAN - looked)
    const page = await (last === undefined
      ? webhooks.listEvents(start.sinceMs, asked, start.afterId)
      : webhooks.listEvents(madeAt(last), asked, last.id))
    for (const event of page) {
      looked++
      last = event
      if (!endpointTakes(endpoint, event)) continue
      events.push(event)
      if (events.length === REPLAY_MAX) return { events, cursor: replayCursor(event) }
    }
    if (page.length < asked) return { events }
  }
  return { events, ...(last === undefined ? {} : { cursor: replayCursor(last) }) }
}
