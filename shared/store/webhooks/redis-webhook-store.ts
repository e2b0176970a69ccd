import type { Redis } from 'ioredis'
import {
  madeAt,
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_CLAIM_ENDPOINTS,
  WEBHOOK_DEAD_KEPT,
  WEBHOOK_TESTS_KEPT,
  oneSharedLane,
  webhookDeliveryId,
  type ClaimLanes,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../../webhook.js'
import type { ShardRevision } from '../change-log/change-log-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import type { AfterWrite } from '../redis/redis-replica-wait.js'
import { storeCall } from '../redis/redis-store-call.js'
import { defineWebhookScripts, type WebhookScripts } from './redis-webhook-scripts.js'
import type { WebhookStore } from './webhook-store.js'

/** Events forgotten per script call of pruneEvents. */
const PRUNE_BATCH = 500
/** Deliveries of the legacy single queue each claim moves into the per-endpoint queues (redis-webhook-scripts.ts). */
const LEGACY_MOVED_PER_CLAIM = 1_000

const { webhookEndpoints: ENDPOINTS, webhookEvents: EVENTS, webhookEventTimes: TIMES } = redisKeys
const { webhookDeliveries: DELIVERIES, webhookDeadlines: DEADLINES } = redisKeys
const { webhookQueuedEndpoints: QUEUED, webhookLegacyDue: LEGACY_DUE } = redisKeys
/** Every endpoint's queue key is this and its id: the scripts name the queues from it (redis-webhook-scripts.ts). */
const QUEUE_PREFIX = redisKeys.webhookQueue('')

/** A delivery's json with its attempts first: RETRY_SCRIPT rewrites them in place (redis-webhook-scripts.ts). */
function deliveryJson({ attempts, id, eventId, endpointId, queuedAt }: WebhookDelivery): string {
  return JSON.stringify({ attempts, id, eventId, endpointId, queuedAt })
}

/** An endpoint's json at `revision`, which comes first: REPLACE_ENDPOINT_SCRIPT reads it there. */
function endpointJson(endpoint: WebhookEndpoint, revision: number): string {
  const { revision: _read, ...rest } = endpoint
  return JSON.stringify({ revision, ...rest })
}

const parse = <T>(json: string): T => JSON.parse(json) as T

/**
 * Webhooks on Redis, every key in the `{wh}` slot (redis-keys.ts `webhook*`); the steps that touch several keys are
 * the scripts of redis-webhook-scripts.ts. Endpoint writes and enqueue wait for the replicas (`afterWrite`) when they
 * changed something, as the other management writes do.
 */
export class RedisWebhookStore implements WebhookStore {
  private readonly redis: Redis & WebhookScripts

  constructor(
    redis: RedisClient,
    private readonly afterWrite: AfterWrite,
  ) {
    this.redis = defineWebhookScripts(redis)
  }

  async createEndpoint(endpoint: WebhookEndpoint): Promise<void> {
    await storeCall(() => this.redis.hset(ENDPOINTS, endpoint.id, JSON.stringify(endpoint)))
    await this.afterWrite()
  }

  async getEndpoint(id: string): Promise<WebhookEndpoint | null> {
    const json = await storeCall(() => this.redis.hget(ENDPOINTS, id))
    return json === null ? null : parse<WebhookEndpoint>(json)
  }

  async listEndpoints(): Promise<WebhookEndpoint[]> {
    const all = await storeCall(() => this.redis.hgetall(ENDPOINTS))
    return Object.keys(all)
      .sort()
      .map((id) => parse<WebhookEndpoint>(all[id]!))
  }

  async replaceEndpoint(endpoint: WebhookEndpoint): Promise<'replaced' | 'changed' | 'gone'> {
    const revision = endpoint.revision ?? 0
    const replaced = await storeCall(() =>
      this.redis.webhookReplaceEndpoint(ENDPOINTS, endpoint.id, revision, endpointJson(endpoint, revision + 1)),
    )
    if (replaced !== 1) return replaced === 0 ? 'gone' : 'changed'
    await this.afterWrite()
    return 'replaced'
  }

  async deleteEndpoint(id: string): Promise<boolean> {
    const { webhookAttempts, webhookTests, webhookDead } = redisKeys
    const removed = await storeCall(() =>
      this.redis.webhookDeleteEndpoint(ENDPOINTS, webhookAttempts(id), webhookTests(id), webhookDead(id), id),
    )
    if (removed !== 1) return false
    await this.afterWrite()
    return true
  }

  async readCursors(): Promise<Map<number, ShardRevision>> {
    const all = await storeCall(() => this.redis.hgetall(redisKeys.webhookCursors))
    return new Map(
      Object.entries(all).map(([shard, json]) => {
        const { epoch, rev } = parse<ShardRevision>(json)
        return [Number(shard), { epoch, rev }]
      }),
    )
  }

  async readNoticeCursors(): Promise<Map<number, string>> {
    const all = await storeCall(() => this.redis.hgetall(redisKeys.webhookNoticeCursors))
    return new Map(Object.entries(all).map(([shard, id]) => [Number(shard), id]))
  }

  async writeNoticeCursor(shard: number, noticeId: string): Promise<void> {
    await storeCall(() => this.redis.hset(redisKeys.webhookNoticeCursors, String(shard), noticeId))
  }

  async moveNoticeCursor(shard: number, from: string, to: string): Promise<boolean> {
    const cursors = redisKeys.webhookNoticeCursors
    return (await storeCall(() => this.redis.webhookMoveNoticeCursor(cursors, String(shard), from, to))) === 1
  }

  async writeCursor(shard: number, { epoch, rev }: ShardRevision): Promise<void> {
    await storeCall(() => this.redis.hset(redisKeys.webhookCursors, String(shard), JSON.stringify({ epoch, rev })))
  }

  async moveCursor(shard: number, from: ShardRevision, { epoch, rev }: ShardRevision): Promise<boolean> {
    const moved = await storeCall(() =>
      this.redis.webhookMoveCursor(
        redisKeys.webhookCursors,
        String(shard),
        from.epoch,
        String(from.rev),
        JSON.stringify({ epoch, rev }),
      ),
    )
    return moved === 1
  }

  async placeCursor(shard: number, { epoch, rev }: ShardRevision): Promise<void> {
    await storeCall(() => this.redis.hsetnx(redisKeys.webhookCursors, String(shard), JSON.stringify({ epoch, rev })))
  }

  async placeNoticeCursor(shard: number, noticeId: string): Promise<void> {
    await storeCall(() => this.redis.hsetnx(redisKeys.webhookNoticeCursors, String(shard), noticeId))
  }

  async enqueue(event: WebhookEvent, endpointIds: string[], dueAt: number): Promise<void> {
    const deliveries = endpointIds.flatMap((endpointId) => {
      const id = webhookDeliveryId(event.id, endpointId)
      return [id, endpointId, deliveryJson({ id, eventId: event.id, endpointId, attempts: 0, queuedAt: dueAt })]
    })
    const written = await storeCall(() =>
      this.redis.webhookEnqueue(
        EVENTS,
        TIMES,
        DELIVERIES,
        QUEUED,
        event.id,
        JSON.stringify(event),
        String(madeAt(event)),
        String(dueAt),
        QUEUE_PREFIX,
        ...deliveries,
      ),
    )
    if (written > 0) await this.afterWrite()
  }

  async getEvent(id: string): Promise<WebhookEvent | null> {
    const json = await storeCall(() => this.redis.hget(EVENTS, id))
    return json === null ? null : parse<WebhookEvent>(json)
  }

  async listEvents(sinceMs: number, limit: number, afterId?: string): Promise<WebhookEvent[]> {
    if (limit <= 0) return []
    const docs = await storeCall(() =>
      this.redis.webhookListEvents(TIMES, EVENTS, String(sinceMs), limit, afterId ?? ''),
    )
    return docs.filter((json): json is string => json !== null).map((json) => parse<WebhookEvent>(json))
  }

  async pruneEvents(beforeMs: number): Promise<void> {
    let forgotten: number
    do {
      forgotten = await storeCall(() => this.redis.webhookPruneEvents(EVENTS, TIMES, String(beforeMs), PRUNE_BATCH))
    } while (forgotten === PRUNE_BATCH)
  }

  async claimDue(nowMs: number, leaseMs: number, limit: number, lanes?: ClaimLanes): Promise<WebhookDelivery[]> {
    if (limit <= 0) return []
    const { lanes: rooms, others, endpoints } = lanes ?? oneSharedLane(limit, nowMs + leaseMs)
    const claimed = await storeCall(() =>
      this.redis.webhookClaimDue(
        QUEUED,
        DELIVERIES,
        LEGACY_DUE,
        String(nowMs),
        String(nowMs + leaseMs),
        limit,
        WEBHOOK_CLAIM_ENDPOINTS,
        QUEUE_PREFIX,
        LEGACY_MOVED_PER_CLAIM,
        rooms.length,
        ...rooms.flatMap(({ room, untilMs }) => [room, String(untilMs)]),
        others.lane,
        others.room,
        ...[...endpoints].flatMap(([id, { lane, room }]) => [id, lane, room]),
      ),
    )
    return claimed.map((json) => parse<WebhookDelivery>(json))
  }

  async complete(deliveryId: string): Promise<void> {
    await storeCall(() => this.redis.webhookComplete(DELIVERIES, QUEUED, LEGACY_DUE, deliveryId, QUEUE_PREFIX))
  }

  async retry(deliveryId: string, attempts: number, dueAt: number): Promise<void> {
    await storeCall(() =>
      this.redis.webhookRetry(
        DELIVERIES,
        QUEUED,
        LEGACY_DUE,
        deliveryId,
        String(attempts),
        String(dueAt),
        QUEUE_PREFIX,
      ),
    )
  }

  async deadLetter(delivery: WebhookDelivery): Promise<void> {
    const dead = redisKeys.webhookDead(delivery.endpointId)
    await storeCall(() =>
      this.redis.webhookDeadLetter(
        DELIVERIES,
        QUEUED,
        LEGACY_DUE,
        redisKeys.webhookQueue(delivery.endpointId),
        dead,
        ENDPOINTS,
        delivery.id,
        deliveryJson(delivery),
        WEBHOOK_DEAD_KEPT,
        delivery.endpointId,
      ),
    )
  }

  async listDead(endpointId: string, limit: number): Promise<WebhookDelivery[]> {
    return this.newest<WebhookDelivery>(redisKeys.webhookDead(endpointId), limit)
  }

  async queueDepth(): Promise<number> {
    // Every queued delivery has its record, in whichever queue it is.
    return storeCall(() => this.redis.hlen(DELIVERIES))
  }

  async recordAttempt(endpointId: string, attempt: WebhookAttempt): Promise<void> {
    const [list, kept] = attempt.test
      ? [redisKeys.webhookTests(endpointId), WEBHOOK_TESTS_KEPT]
      : [redisKeys.webhookAttempts(endpointId), WEBHOOK_ATTEMPTS_KEPT]
    await storeCall(() => this.redis.webhookRecordAttempt(ENDPOINTS, list, endpointId, JSON.stringify(attempt), kept))
  }

  async listAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]> {
    return this.newest<WebhookAttempt>(redisKeys.webhookAttempts(endpointId), limit)
  }

  async listTestAttempts(endpointId: string, limit: number): Promise<WebhookAttempt[]> {
    return this.newest<WebhookAttempt>(redisKeys.webhookTests(endpointId), limit)
  }

  async schedule(member: string, atMs: number): Promise<void> {
    await storeCall(() => this.redis.zadd(DEADLINES, String(atMs), member))
  }

  async unschedule(member: string): Promise<void> {
    await storeCall(() => this.redis.zrem(DEADLINES, member))
  }

  async claimDeadlines(nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    if (limit <= 0) return []
    return storeCall(() => this.redis.webhookClaimDeadlines(DEADLINES, String(nowMs), String(nowMs + leaseMs), limit))
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await storeCall(() => this.redis.webhookHoldLease(redisKeys.webhookLease(name), holder, ttlMs))) === 1
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await storeCall(() => this.redis.webhookReleaseLease(redisKeys.webhookLease(name), holder))
  }

  /** The first `limit` items of a newest-first list (LRANGE's stop is inclusive, and -1 would mean all). */
  private async newest<T>(list: string, limit: number): Promise<T[]> {
    if (limit <= 0) return []
    const items = await storeCall(() => this.redis.lrange(list, 0, limit - 1))
    return items.map((json) => parse<T>(json))
  }
}
