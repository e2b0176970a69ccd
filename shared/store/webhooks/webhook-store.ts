import type { ClaimLanes, WebhookAttempt, WebhookDelivery, WebhookEndpoint, WebhookEvent } from '../../webhook.js'
import type { ShardRevision } from '../change-log/change-log-store.js'

/**
 * Webhooks' state (`store.webhooks`): endpoints, the events derived from the change logs, the delivery queue, the
 * delivery log, scheduled deadlines and the deriver's lease. On Redis all of it lives in one hash slot (`{wh}`), so
 * that each method is one atomic step on a single Redis and a Cluster alike. Every replica of the control plane works
 * on the same queue: a delivery is claimed for a lease, and a claim whose holder died comes due again when the lease
 * runs out (at-least-once).
 *
 * Absence is `null`/`false`, never an exception; store failures throw `StoreUnavailableError`.
 */
export interface WebhookStore {
  /** Stores a new endpoint (its id is new: no check for an existing one). */
  createEndpoint(endpoint: WebhookEndpoint): Promise<void>
  getEndpoint(id: string): Promise<WebhookEndpoint | null>
  /** Every endpoint, in id order (ids sort by creation time). */
  listEndpoints(): Promise<WebhookEndpoint[]>
  /**
   * Replaces the endpoint with `endpoint` if it is still at the revision `endpoint` was read at (its `revision`,
   * absent: 0), storing it at the next one: a change made from a copy another write has since replaced is `changed`,
   * and one of an endpoint deleted meanwhile `gone`, nothing written either way. One atomic step.
   */
  replaceEndpoint(endpoint: WebhookEndpoint): Promise<'replaced' | 'changed' | 'gone'>
  /** Removes the endpoint and its delivery log (tests' attempts too) and dead letters; false if it was not there.
   * Queued deliveries to it are dropped when they come due (the worker finds no endpoint). */
  deleteEndpoint(id: string): Promise<boolean>

  /** The deriver's position in each shard's change log (shards never derived from are absent). */
  readCursors(): Promise<Map<number, ShardRevision>>
  /** Sets the shard's cursor, wherever it stands. */
  writeCursor(shard: number, position: ShardRevision): Promise<void>
  /**
   * Moves the shard's cursor from `from` to `to` only if it is still at `from` (epoch and revision), one atomic step;
   * false, nothing written, if another deriver moved it meanwhile: a look that outlasted its lease never takes back
   * what the next lease holder derived (those changes would be derived again, and sent again once delivered).
   */
  moveCursor(shard: number, from: ShardRevision, to: ShardRevision): Promise<boolean>
  /** The deriver's position in each shard's credit notices: the last notice id read (shards never read: absent). */
  readNoticeCursors(): Promise<Map<number, string>>
  /** Sets the shard's notice cursor, wherever it stands. */
  writeNoticeCursor(shard: number, noticeId: string): Promise<void>
  /** Moves the shard's notice cursor from `from` to `to` only if it is still at `from`, as moveCursor does. */
  moveNoticeCursor(shard: number, from: string, to: string): Promise<boolean>
  /**
   * The shard's first cursors, each written only if the shard has none: one placed by another control plane meanwhile
   * (and maybe moved on since, past changes `position` does not include) is left as it is.
   */
  placeCursor(shard: number, position: ShardRevision): Promise<void>
  placeNoticeCursor(shard: number, noticeId: string): Promise<void>

  /**
   * Keeps the event (for the retention, unless kept already: the same id is the same event) and queues one delivery
   * of it per endpoint id, due at `dueAt`, each only if no delivery with its id is queued: deriving the same cause
   * twice queues nothing twice. One atomic step.
   */
  enqueue(event: WebhookEvent, endpointIds: string[], dueAt: number): Promise<void>
  getEvent(id: string): Promise<WebhookEvent | null>
  /**
   * Kept events in the order they were made (webhook.ts madeAt, then id), at most `limit` (replay): those made at or
   * after `sinceMs`, or, with `afterId`, those after that event in this order while it is still kept (the caller's
   * `sinceMs` being when it was made, where the listing starts once it is forgotten). Events are made in time order,
   * so a listing taken up after the last event of the one before misses none and repeats none.
   */
  listEvents(sinceMs: number, limit: number, afterId?: string): Promise<WebhookEvent[]>
  /** Forgets events made before `beforeMs` (their deliveries are done or dead by then). */
  pruneEvents(beforeMs: number): Promise<void>

  /**
   * Claims up to `limit` deliveries due at `nowMs`: endpoints in the order of their earliest due delivery (ties by id),
   * each one's oldest due first. Each delivery claimed is made due again at nowMs + leaseMs (> 0) in the same step, so
   * another caller does not take it while it is being sent, and a caller that dies loses it to the next one after the
   * lease. The queue is kept per endpoint: a claim looks at each endpoint with something due once (at most
   * WEBHOOK_CLAIM_ENDPOINTS of them), never at each of its deliveries, so one endpoint's backlog never stands in front
   * of another's delivery. With `lanes`, the claim takes of each endpoint and each lane at most their room, and passes
   * over the endpoints it leaves deliveries due to (ClaimLanes): not looked at again until their lane's `untilMs`.
   * Without, any endpoint may fill the claim.
   */
  claimDue(nowMs: number, leaseMs: number, limit: number, lanes?: ClaimLanes): Promise<WebhookDelivery[]>
  /** The delivery is done (delivered, or dropped): off the queue. */
  complete(deliveryId: string): Promise<void>
  /** Another attempt at `dueAt`, with `attempts` made so far; nothing if the delivery is no longer queued. */
  retry(deliveryId: string, attempts: number, dueAt: number): Promise<void>
  /**
   * Given up: off the queue, into the endpoint's dead letters (newest first, capped at WEBHOOK_DEAD_KEPT; none once the
   * endpoint is deleted); nothing if the delivery is no longer queued (another caller, whose claim it was after a lease
   * ran out, finished it).
   */
  deadLetter(delivery: WebhookDelivery): Promise<void>
  /** Dead letters of an endpoint, newest first. */
  listDead(endpointId: string, limit: number): Promise<WebhookDelivery[]>
  /** Deliveries queued (due now or later, claimed or not). */
  queueDepth(): Promise<number>

  /**
   * Adds an attempt to the endpoint's delivery log (newest first, capped at WEBHOOK_ATTEMPTS_KEPT), or a test's
   * (`test`) to the endpoint's tests, a list apart (capped at WEBHOOK_TESTS_KEPT), so that tests never push a
   * delivery's attempt out; only if the endpoint still exists: one settled after its endpoint was deleted leaves
   * nothing behind.
   */
  recordAttempt(endpointId: string, attempt: WebhookAttempt): Promise<void>
  /** The endpoint's last attempts at deliveries, newest first. */
  listAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]>
  /** The endpoint's last tests' attempts, newest first. */
  listTestAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]>

  /** A deadline (`key.expiring|<keyId>|<expires>`…) to fire at `atMs`; setting it again moves it. */
  schedule(member: string, atMs: number): Promise<void>
  /** Forgets a deadline: once its event is queued. */
  unschedule(member: string): Promise<void>
  /**
   * Claims up to `limit` deadlines due at `nowMs`, oldest first, each made due again at nowMs + leaseMs in the same
   * step, as claimDue does deliveries: one caller at a time fires a deadline, and unschedules it once its event is
   * queued. A caller that dies or fails in between loses it to the next after the lease, so a deadline is never lost
   * between being taken and its event being queued (fired again, the event has the same id).
   */
  claimDeadlines(nowMs: number, leaseMs: number, limit: number): Promise<string[]>

  /**
   * Holds the lease `name` for `holder` for `ttlMs` from now: true if it was free, expired or already this holder's
   * (then renewed), false if another holder has it.
   */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>
  /** Gives the lease up if `holder` has it (a process stopping), so that another takes it at once. */
  releaseLease(name: string, holder: string): Promise<void>
}
