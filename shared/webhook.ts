/**
 * Outbound events (webhooks): what an endpoint is, what an event is, and how a delivery stands. The control plane
 * derives events from the shards' change logs (control-plane/webhooks/), queues one delivery per subscribed endpoint
 * and signs each request per the Standard Webhooks specification. Events carry ids and fields, never a key or a hash.
 */
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './ui-shapes.js'
import type { MeterExport } from './meter-export.js'

export { WEBHOOK_EVENT_TYPES, type WebhookEventType }

/**
 * Event types an endpoint is sent only if it names them: one event per customer and period could flood a receiver
 * that takes every type, and reading them takes analytics rights an endpoint of every type was not made with.
 */
export const OPT_IN_EVENT_TYPES: readonly WebhookEventType[] = ['usage.hourly', 'usage.daily', 'usage.threshold']

/** The types an endpoint taking `eventTypes` is sent: those, or (none named) every type but the opt-in ones. */
export function typesTaken(eventTypes: readonly WebhookEventType[]): readonly WebhookEventType[] {
  return eventTypes.length > 0 ? eventTypes : WEBHOOK_EVENT_TYPES.filter((type) => !OPT_IN_EVENT_TYPES.includes(type))
}

export function isWebhookEventType(value: string): value is WebhookEventType {
  return (WEBHOOK_EVENT_TYPES as readonly string[]).includes(value)
}

/** A signing secret: `whsec_` and base64 of 32 random bytes (the Standard Webhooks format). */
export interface WebhookSecret {
  secret: string
  createdAt: number
  /** Set when a newer secret replaced it: both sign until then (rotation's grace period), unix ms. */
  expiresAt?: number
}

/** Where events go. The secrets are kept as they are (signing needs them): the store is the boundary. */
export interface WebhookEndpoint {
  /** `whep_…` */
  id: string
  /** http(s) only; checked against the private-range policy when set and again at every delivery. */
  url: string
  description?: string
  /** The event types it receives; empty: every type but the opt-in ones (OPT_IN_EVENT_TYPES). */
  eventTypes: WebhookEventType[]
  /**
   * The apis it is scoped to: it receives only events about them (whose `data.apiId` is one of them; usage events
   * summed over exactly them, endpoint-wants.ts). Absent (an endpoint stored before scopes were) or empty: unscoped,
   * every event of its types.
   */
  apiIds?: string[]
  enabled: boolean
  /** Newest first: the first signs; the others sign too until their `expiresAt`. */
  secrets: WebhookSecret[]
  createdAt: number
  updatedAt?: number
  /**
   * Since when events go to its `url`, unix ms: its creation, then each change of its URL. A replay sends only events
   * made from then on, so a receiver it is pointed at never learns what was sent before. Absent (an endpoint stored
   * before it was kept): `createdAt`.
   */
  receivingSince?: number
  /**
   * How many times it was replaced (absent: never): the store replaces it only from the revision it was read at, so a
   * change made from a stale copy never undoes another (WebhookStore.replaceEndpoint).
   */
  revision?: number
  /** Set when the endpoint is a meter export: usage to a billing provider instead of signed events. */
  export?: MeterExport
}

/** Since when the endpoint receives at its URL: what a replay is bounded by. */
export const receivingSince = (endpoint: Pick<WebhookEndpoint, 'receivingSince' | 'createdAt'>): number =>
  endpoint.receivingSince ?? endpoint.createdAt

/** One event, as every endpoint that wants it receives it: the same id (`webhook-id`) on every attempt. */
export interface WebhookEvent {
  /** `msg_…`, derived from what caused it, so that deriving the same cause twice makes the same event. */
  id: string
  type: WebhookEventType
  /** When it happened, unix ms: the body's `timestamp`. */
  at: number
  /**
   * When Keygate made it (derived it from its change and queued it), unix ms: after `at` by as long as the deriver
   * took to read the change. Kept events are listed, replayed and forgotten in this order. Absent (an event kept
   * before it was recorded): `at`.
   */
  madeAt?: number
  /** Ids and fields of the record concerned; never a key, a hash or a secret. */
  data: Record<string, unknown>
}

/** When the event was made: what replay and retention go by. */
export const madeAt = (event: Pick<WebhookEvent, 'madeAt' | 'at'>): number => event.madeAt ?? event.at

/** One event on its way to one endpoint. */
export interface WebhookDelivery {
  /** `<eventId>.<endpointId>`: one delivery per event and endpoint, whoever derives the event. */
  id: string
  eventId: string
  endpointId: string
  /** Attempts made so far (0: none yet). */
  attempts: number
  /** When it was first queued, unix ms: retries stop after the retry window from here. */
  queuedAt: number
}

/** A delivery's id: one per event and endpoint, so that queueing the same event twice queues it once. */
export function webhookDeliveryId(eventId: string, endpointId: string): string {
  return `${eventId}.${endpointId}`
}

/** What one attempt at a delivery did, as the delivery log keeps it (per endpoint, newest first, capped). */
export interface WebhookAttempt {
  deliveryId: string
  eventId: string
  eventType: WebhookEventType
  /** When the request was sent, unix ms. */
  at: number
  /** 1 for the first attempt. */
  attempt: number
  /** The endpoint's HTTP status, absent when no answer came (refused, timed out, reset). */
  status?: number
  /** Why it failed, when it did: `timeout`, `refused: private address`, `HTTP 500`… */
  error?: string
  latencyMs: number
  /** The first bytes of the answer's body, as text. */
  responseSnippet?: string
  /**
   * delivered, retry (it will be tried again) or dead (given up: moved to the dead letters); failed: a test event
   * not answered 2xx (tests are sent once, never retried).
   */
  outcome: 'delivered' | 'retry' | 'dead' | 'failed'
  /** An example event webhooks.sendTest sent: not kept, so not replayed. */
  test?: true
}

/** How many endpoints a deployment may have: every event is fanned out to each, on every replica's worker. */
export const MAX_WEBHOOK_ENDPOINTS = 100
/** The apis one endpoint may be scoped to, at most: each is checked (it exists, the root key reads it) when set. */
export const MAX_ENDPOINT_APIS = 100
/** Attempts kept per endpoint in the delivery log. */
export const WEBHOOK_ATTEMPTS_KEPT = 100
/** Test events' attempts kept per endpoint, apart from the delivery log's, so that tests never push those out. */
export const WEBHOOK_TESTS_KEPT = 10
/** Dead deliveries kept per endpoint. */
export const WEBHOOK_DEAD_KEPT = 1_000
/**
 * Endpoints one claim looks at, at most (each one's due deliveries claimed, or passed over): every endpoint, and as
 * many deleted ones whose queued deliveries are still to be dropped. A bound on a claim's work, whatever the backlogs.
 */
export const WEBHOOK_CLAIM_ENDPOINTS = 2 * MAX_WEBHOOK_ENDPOINTS

/** Where an endpoint's deliveries go in a claim (ClaimLanes): its lane, and how many of them the claim may take. */
export interface EndpointRoom {
  /** An index into ClaimLanes.lanes. */
  lane: number
  room: number
}

/**
 * How a claim shares out what it takes (WebhookStore.claimDue): each endpoint's deliveries go in a lane, and the claim
 * takes at most the endpoint's `room` of them and at most the lane's `room` in all; an endpoint with due deliveries
 * left once its room or its lane's is used is passed over, looked at again at its lane's `untilMs` (sooner if a lease
 * of its runs out first), its deliveries' attempts unchanged.
 */
export interface ClaimLanes {
  /** Each lane's room, and when what it passes over is due again (unix ms, after the claim's now). */
  lanes: readonly { room: number; untilMs: number }[]
  /** Endpoints by id. */
  endpoints: ReadonlyMap<string, EndpointRoom>
  /** Each endpoint not listed, on its own. */
  others: EndpointRoom
}

/** A claim without lanes: one lane as large as the claim, which any endpoint may fill; leftovers due at `untilMs`. */
export function oneSharedLane(limit: number, untilMs: number): ClaimLanes {
  return { lanes: [{ room: limit, untilMs }], endpoints: new Map(), others: { lane: 0, room: limit } }
}
