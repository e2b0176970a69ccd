import type { RedisClient } from '../store/redis/redis-connection.js'
import { parseChangeEvent } from '../change-event.js'
import { parseCreditNoticeHint } from '../keys/credit-notice.js'
import { redisKeys } from '../store/redis/redis-keys.js'
import type { ChangeFeed, ChangeFeedHandlers } from './change-feed.js'

/**
 * How often a live subscription is asked PING, ms. A subscriber only listens, so a dead path to Redis would go
 * unnoticed (no command, no timeout): the PING's timeout ends the connection (coalescing-redis.ts), and the reconnect
 * subscribes again, the subscriber resyncing as after any disconnection.
 */
const HEARTBEAT_MS = 1_000

/**
 * Change events over Redis pub/sub on a dedicated connection. ioredis' own resubscribe is off: we
 * subscribe on every `ready` ourselves so that onSubscribed fires only once the subscription is live again,
 * which is when the subscriber must resync (everything published in between was lost).
 */
export class RedisChangeFeed implements ChangeFeed {
  readonly kind = 'redis' as const
  private readonly redis: RedisClient
  private handlers: ChangeFeedHandlers | undefined
  private closed = false
  private live = false
  private firstSubscribed: (() => void) | undefined
  private heartbeat: NodeJS.Timeout | undefined

  /** Takes over `redis` (a connection of its own, opened with autoResubscribe: false): close() closes it. */
  constructor(redis: RedisClient) {
    this.redis = redis
  }

  /**
   * Resolves once subscribed. While the connection is still being established it waits for it; if a
   * subscribe on a ready connection fails it rejects, and the handlers stay registered: the next
   * reconnect subscribes and calls onSubscribed.
   */
  async subscribe(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers
    this.redis.on('message', (_channel: string, message: string) => {
      const event = parseChangeEvent(message)
      if (event) {
        handlers.onEvent(event)
        return
      }
      const noticeShard = parseCreditNoticeHint(message)
      if (noticeShard !== undefined) handlers.onCreditNotice?.(noticeShard)
    })
    this.redis.on('close', () => this.markDown())
    this.redis.on('ready', () => void this.resubscribe().catch(() => {}))
    if (this.redis.status !== 'ready') {
      await new Promise<void>((resolve) => (this.firstSubscribed = resolve))
      return
    }
    await this.resubscribe()
  }

  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.heartbeat)
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  /** Throws if the connection is down; after the first call, the next `ready` event retries. */
  private async resubscribe(): Promise<void> {
    if (this.closed || !this.handlers) return
    await this.redis.subscribe(redisKeys.changesChannel)
    // Closed while the subscription was on its way: no handler, and no heartbeat, after close().
    if (this.closed) return
    this.live = true
    this.heartbeat ??= setInterval(() => {
      if (this.live) this.redis.ping().catch(() => {})
    }, HEARTBEAT_MS).unref()
    this.handlers.onSubscribed()
    this.firstSubscribed?.()
    this.firstSubscribed = undefined
  }

  private markDown(): void {
    if (!this.live) return
    this.live = false
    if (!this.closed) this.handlers?.onDisconnected()
  }
}
