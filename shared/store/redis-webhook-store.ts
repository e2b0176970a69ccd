import type { Redis } from 'ioredis'
import {
  madeAt,
  WEBHOOK_ATTEMPTS_KEPT,
  WEBHOOK_CLAIM_SCAN,
  WEBHOOK_DEAD_KEPT,
  WEBHOOK_TESTS_KEPT,
  webhookDeliveryId,
  type ClaimLanes,
  type WebhookAttempt,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookEvent,
} from '../webhook.js'
import type { ShardRevision } from './change-log-store.js'
import type { RedisClient } from './redis-connection.js'
import { redisKeys } from './redis-keys.js'
import type { AfterWrite } from './redis-replica-wait.js'
import { storeCall } from './redis-store-call.js'
import { defineWebhookScripts, type WebhookScripts } from './redis-webhook-scripts.js'
import type { WebhookStore } from './webhook-store.js'

/** Events forgotten per script call of pruneEvents. */
const PRUNE_BATCH = 500

const { webhookEndpoints: ENDPOINTS, webhookEvents: EVENTS, webhookEventTimes: TIMES } = redisKeys
const { webhookDeliveries: DELIVERIES, webhookDue: DUE, webhookDeadlines: DEADLINES } = redisKeys

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

  async writeCursor(shard: number, { epoch, rev }: ShardRevision): Promise<void> {
    await storeCall(() => this.redis.hset(redisKeys.webhookCursors, String(shard), JSON.stringify({ epoch, rev })))
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
      return [id, deliveryJson({ id, eventId: event.id, endpointId, attempts: 0, queuedAt: dueAt })]
    })
    const written = await storeCall(() =>
      this.redis.webhookEnqueue(
        EVENTS,
        TIMES,
        DELIVERIES,
        DUE,
        event.id,
        JSON.stringify(event),
        String(madeAt(event)),
        String(dueAt),
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
    // Without lanes: one, as large as the claim, which any endpoint may fill.
    const oneLane: ClaimLanes = {
      lanes: [{ room: limit, untilMs: nowMs + leaseMs }],
      others: { lane: 0, room: limit },
      endpoints: new Map(),
    }
    const { lanes: rooms, others, endpoints } = lanes ?? oneLane
    const claimed = await storeCall(() =>
      this.redis.webhookClaimDue(
        DUE,
        DELIVERIES,
        String(nowMs),
        String(nowMs + leaseMs),
        limit,
        WEBHOOK_CLAIM_SCAN,
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
    await storeCall(() => this.redis.webhookComplete(DUE, DELIVERIES, deliveryId))
  }

  async retry(deliveryId: string, attempts: number, dueAt: number): Promise<void> {
    await storeCall(() => this.redis.webhookRetry(DUE, DELIVERIES, deliveryId, String(attempts), String(dueAt)))
  }

  async deadLetter(delivery: WebhookDelivery): Promise<void> {
    const dead = redisKeys.webhookDead(delivery.endpointId)
    await storeCall(() =>
      this.redis.webhookDeadLetter(
        DUE,
        DELIVERIES,
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
    return storeCall(() => this.redis.zcard(DUE))
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
