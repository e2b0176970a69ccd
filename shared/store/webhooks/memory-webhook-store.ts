import { systemClock, type Clock } from '../../clock.js'
import {
  madeAt,
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_CLAIM_ENDPOINTS,
  WEBHOOK_DEAD_KEPT,
  WEBHOOK_TESTS_KEPT,
  oneSharedLane,
  webhookDeliveryId,
  type ClaimLanes,
  type EndpointRoom,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../../webhook.js'
import type { ShardRevision } from '../change-log/change-log-store.js'
import type { WebhookStore } from './webhook-store.js'

/**
 * Webhooks in process memory (the embedded default). Each method is one synchronous step, so atomic as the Redis
 * scripts are; the queues, the queued endpoints, the events' index and the deadlines keep the order of a Redis sorted
 * set (by score, then by member). Leases run on `clock`, where Redis runs them on its own.
 */
export class MemoryWebhookStore implements WebhookStore {
  private readonly endpoints = new Map<string, WebhookEndpoint>()
  private readonly cursors = new Map<number, ShardRevision>()
  private readonly noticeCursors = new Map<number, string>()
  private readonly events = new Map<string, WebhookEvent>()
  /** Every queued delivery, by id. */
  private readonly deliveries = new Map<string, WebhookDelivery>()
  /** Each endpoint's queue: its deliveries' ids → when each is due (unix ms). */
  private readonly queues = new Map<string, Map<string, number>>()
  /** The endpoints with deliveries queued → when a claim looks at each next (the Redis store's queued endpoints). */
  private readonly queued = new Map<string, number>()
  /** Newest first, per endpoint id: deliveries' attempts, and tests' apart. */
  private readonly attempts = new Map<string, WebhookAttempt[]>()
  private readonly tests = new Map<string, WebhookAttempt[]>()
  private readonly dead = new Map<string, WebhookDelivery[]>()
  /** Deadline member → when it fires, unix ms. */
  private readonly deadlines = new Map<string, number>()
  private readonly leases = new Map<string, { holder: string; until: number }>()

  constructor(private readonly clock: Clock = systemClock) {}

  async createEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    this.endpoints.set(endpoint.id, structuredClone(endpoint))
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint | null> {
    const endpoint = this.endpoints.get(id)
    return endpoint ? structuredClone(endpoint) : null
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    return [...this.endpoints.values()].sort((a, b) => compare(a.id, b.id)).map((e) => structuredClone(e))
  }

  async replaceEndpoint(endpoint: WebhookEndpoint): Promise<'replaced' | 'changed' | 'gone'> {
    const stored = this.endpoints.get(endpoint.id)
    if (!stored) return 'gone'
    const revision = endpoint.revision ?? 0
    if ((stored.revision ?? 0) !== revision) return 'changed'
    this.endpoints.set(endpoint.id, { ...structuredClone(endpoint), revision: revision + 1 })
    return 'replaced'
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    this.attempts.delete(id)
    this.tests.delete(id)
    this.dead.delete(id)
    return this.endpoints.delete(id)
  }

  async readCursors(): Promise<Map<number, ShardRevision>> {
    return new Map([...this.cursors].map(([shard, { epoch, rev }]) => [shard, { epoch, rev }]))
  }

  async readNoticeCursors(): Promise<Map<number, string>> {
    return new Map(this.noticeCursors)
  }

  async writeNoticeCursor(shard: number, noticeId: string): Promise<void> {
    this.noticeCursors.set(shard, noticeId)
  }

  async moveNoticeCursor(shard: number, from: string, to: string): Promise<boolean> {
    if (this.noticeCursors.get(shard) !== from) return false
    this.noticeCursors.set(shard, to)
    return true
  }

  async writeCursor(shard: number, { epoch, rev }: ShardRevision): Promise<void> {
    this.cursors.set(shard, { epoch, rev })
  }

  async moveCursor(shard: number, from: ShardRevision, to: ShardRevision): Promise<boolean> {
    const at = this.cursors.get(shard)
    if (!at || at.epoch !== from.epoch || at.rev !== from.rev) return false
    await this.writeCursor(shard, to)
    return true
  }

  async placeCursor(shard: number, position: ShardRevision): Promise<void> {
    if (!this.cursors.has(shard)) await this.writeCursor(shard, position)
  }

  async placeNoticeCursor(shard: number, noticeId: string): Promise<void> {
    if (!this.noticeCursors.has(shard)) this.noticeCursors.set(shard, noticeId)
  }

  async enqueue(event: WebhookEvent, endpointIds: string[], dueAt: number): Promise<void> {
    if (!this.events.has(event.id)) this.events.set(event.id, structuredClone(event))
    for (const endpointId of endpointIds) {
      const id = webhookDeliveryId(event.id, endpointId)
      if (this.deliveries.has(id)) continue
      this.deliveries.set(id, { id, eventId: event.id, endpointId, attempts: 0, queuedAt: dueAt })
      this.queueOf(endpointId).set(id, dueAt)
      this.lookAtBy(endpointId, dueAt)
    }
  }

  async getEvent(id: string): Promise<WebhookEvent | null> {
    const event = this.events.get(id)
    return event ? structuredClone(event) : null
  }

  async listEvents(sinceMs: number, limit: number, afterId?: string): Promise<WebhookEvent[]> {
    const after = afterId === undefined ? undefined : this.events.get(afterId)
    // After a kept event: from its place in the order (madeAt, then id); else from sinceMs.
    const from = after ? madeAt(after) : sinceMs
    const times = new Map(
      [...this.events.values()]
        .filter((e) => madeAt(e) >= from && !(after && madeAt(e) === from && e.id <= after.id))
        .map((e) => [e.id, madeAt(e)]),
    )
    return lowest(times, Number.POSITIVE_INFINITY, limit).map((id) => structuredClone(this.events.get(id)!))
  }

  async pruneEvents(beforeMs: number): Promise<void> {
    for (const [id, event] of this.events) if (madeAt(event) < beforeMs) this.events.delete(id)
  }

  async claimDue(nowMs: number, leaseMs: number, limit: number, lanes?: ClaimLanes): Promise<WebhookDelivery[]> {
    const share = new ClaimShare(lanes ?? oneSharedLane(limit, nowMs + leaseMs))
    // As CLAIM_DUE_SCRIPT: at most the room the lanes had when asked, counted once.
    const most = Math.min(limit, share.room)
    const claimed: WebhookDelivery[] = []
    const waited = { count: 0 }
    // Each endpoint looked at leaves the range due at nowMs but the last when the claim is full: the script's pages.
    for (const endpointId of lowest(this.queued, nowMs, WEBHOOK_CLAIM_ENDPOINTS)) {
      if (claimed.length >= most) break
      const queue = this.queueOf(endpointId)
      for (const id of lowest(queue, nowMs, Math.min(share.roomOf(endpointId), most - claimed.length))) {
        share.take(endpointId)
        queue.set(id, nowMs + leaseMs)
        claimed.push({ ...this.deliveries.get(id)! })
      }
      this.lookAtNext(endpointId, nowMs, claimed.length < most ? share : undefined, waited)
    }
    return claimed
  }

  async complete(deliveryId: string): Promise<void> {
    const delivery = this.deliveries.get(deliveryId)
    if (!delivery) return
    this.deliveries.delete(deliveryId)
    const queue = this.queueOf(delivery.endpointId)
    queue.delete(deliveryId)
    if (queue.size === 0) this.forgetQueue(delivery.endpointId)
  }

  async retry(deliveryId: string, attempts: number, dueAt: number): Promise<void> {
    const delivery = this.deliveries.get(deliveryId)
    if (!delivery) return
    delivery.attempts = attempts
    this.queueOf(delivery.endpointId).set(deliveryId, dueAt)
    this.lookAtBy(delivery.endpointId, dueAt)
  }

  async deadLetter(delivery: WebhookDelivery): Promise<void> {
    // Only a delivery still queued: one another worker already finished (its lease ran out) is not dead twice.
    if (!this.deliveries.has(delivery.id)) return
    await this.complete(delivery.id)
    // An endpoint deleted meanwhile has no dead letters to keep.
    if (this.endpoints.has(delivery.endpointId))
      pushCapped(this.dead, delivery.endpointId, { ...delivery }, WEBHOOK_DEAD_KEPT)
  }

  async listDead(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    return (this.dead.get(endpointId) ?? []).slice(0, Math.max(0, limit)).map((d) => ({ ...d }))
  }

  async queueDepth(): Promise<number> {
    return this.deliveries.size
  }

  async recordAttempt(endpointId: string, attempt: WebhookAttempt): Promise<void> {
    if (!this.endpoints.has(endpointId)) return
    if (attempt.test) pushCapped(this.tests, endpointId, structuredClone(attempt), WEBHOOK_TESTS_KEPT)
    else pushCapped(this.attempts, endpointId, structuredClone(attempt), WEBHOOK_ATTEMPTS_KEPT)
  }

  async listAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]> {
    return (this.attempts.get(endpointId) ?? []).slice(0, Math.max(0, limit)).map((a) => structuredClone(a))
  }

  async listTestAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]> {
    return (this.tests.get(endpointId) ?? []).slice(0, Math.max(0, limit)).map((a) => structuredClone(a))
  }

  async schedule(member: string, atMs: number): Promise<void> {
    this.deadlines.set(member, atMs)
  }

  async unschedule(member: string): Promise<void> {
    this.deadlines.delete(member)
  }

  async claimDeadlines(nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const claimed = lowest(this.deadlines, nowMs, limit)
    for (const member of claimed) this.deadlines.set(member, nowMs + leaseMs)
    return claimed
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const now = this.clock.now()
    const lease = this.leases.get(name)
    if (lease && lease.until > now && lease.holder !== holder) return false
    this.leases.set(name, { holder, until: now + ttlMs })
    return true
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name)
  }

  private queueOf(endpointId: string): Map<string, number> {
    let queue = this.queues.get(endpointId)
    if (!queue) this.queues.set(endpointId, (queue = new Map<string, number>()))
    return queue
  }

  private forgetQueue(endpointId: string): void {
    this.queues.delete(endpointId)
    this.queued.delete(endpointId)
  }

  /** A claim looks at the endpoint by `atMs` (ZADD LT). */
  private lookAtBy(endpointId: string, atMs: number): void {
    this.queued.set(endpointId, Math.min(atMs, this.queued.get(endpointId) ?? atMs))
  }

  /**
   * When a claim looks at the endpoint next, once this one has: when its first delivery is due; or, if it still has
   * deliveries due while the claim had room (`share`; undefined: the claim is full): when it had none itself, at its
   * lane's time (sooner if a lease of its ends first); when only its lane had none, a thousandth of a ms after `nowMs`
   * per endpoint so left (`waited`), first in line at the next claim (CLAIM_DUE_SCRIPT).
   */
  private lookAtNext(
    endpointId: string,
    nowMs: number,
    share: ClaimShare | undefined,
    waited: { count: number },
  ): void {
    const queue = this.queueOf(endpointId)
    const [first] = lowest(queue, Number.POSITIVE_INFINITY, 1)
    if (first === undefined) return this.forgetQueue(endpointId)
    const firstDue = queue.get(first)!
    if (firstDue > nowMs || share === undefined || share.roomOf(endpointId) > 0) {
      this.queued.set(endpointId, firstDue)
      return
    }
    if (share.ownRoomOf(endpointId) > 0) {
      this.queued.set(endpointId, nowMs + ++waited.count / 1_000)
      return
    }
    const leaseEnds = [...queue.values()].filter((due) => due > nowMs)
    this.queued.set(endpointId, Math.min(share.untilOf(endpointId), ...leaseEnds))
  }
}

/** What is left of a claim's lanes as it takes deliveries: CLAIM_DUE_SCRIPT's bookkeeping. */
class ClaimShare {
  private readonly laneRooms: number[]
  private readonly rooms = new Map<string, number>()

  constructor(private readonly lanes: ClaimLanes) {
    this.laneRooms = lanes.lanes.map((lane) => lane.room)
  }

  /** Room left in every lane together. */
  get room(): number {
    return this.laneRooms.reduce((sum, room) => sum + Math.max(0, room), 0)
  }

  /** How many more of the endpoint's deliveries the claim may take: its room and its lane's, the smaller. */
  roomOf(endpointId: string): number {
    const { lane, room } = this.placeOf(endpointId)
    return Math.max(0, Math.min(this.rooms.get(endpointId) ?? room, this.laneRooms[lane] ?? 0))
  }

  /** How many more of the endpoint's deliveries its own room allows, whatever its lane's. */
  ownRoomOf(endpointId: string): number {
    return this.rooms.get(endpointId) ?? this.placeOf(endpointId).room
  }

  /** When a claim looks again at the endpoint passed over: its lane's time. */
  untilOf(endpointId: string): number {
    return this.lanes.lanes[this.placeOf(endpointId).lane]!.untilMs
  }

  /** One of the endpoint's deliveries taken (roomOf it was > 0). */
  take(endpointId: string): void {
    const { lane, room } = this.placeOf(endpointId)
    this.rooms.set(endpointId, (this.rooms.get(endpointId) ?? room) - 1)
    this.laneRooms[lane]!--
  }

  private placeOf(endpointId: string): EndpointRoom {
    return this.lanes.endpoints.get(endpointId) ?? this.lanes.others
  }
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** At most `limit` members scored ≤ max, lowest first, ties by member: ZRANGE BYSCORE's order. */
function lowest(scores: Map<string, number>, max: number, limit: number): string[] {
  return [...scores]
    .filter(([, score]) => score <= max)
    .sort(([a, x], [b, y]) => x - y || compare(a, b))
    .slice(0, Math.max(0, limit))
    .map(([member]) => member)
}

/** LPUSH and LTRIM: newest first, the oldest dropped past `kept`. */
function pushCapped<T>(lists: Map<string, T[]>, id: string, item: T, kept: number): void {
  const list = lists.get(id) ?? []
  list.unshift(item)
  if (list.length > kept) list.length = kept
  lists.set(id, list)
}
