import type { Redis } from 'ioredis'
import { parseChangeEvent } from '../change-event.js'
import { redisKeys } from '../store/redis-keys.js'
import type { ChangeFeed, ChangeFeedHandlers } from './change-feed.js'

/**
 * Change events over Redis pub/sub on a dedicated connection. ioredis' own resubscribe is off: we
 * subscribe on every `ready` ourselves so that onSubscribed fires only once the subscription is live again,
 * which is when the subscriber must resync (everything published in between was lost).
 */
export class RedisChangeFeed implements ChangeFeed {
  readonly kind = 'redis' as const
  private readonly redis: Redis
  private handlers: ChangeFeedHandlers | undefined
  private closed = false
  private live = false

  /** Takes over `redis` (a connection of its own, opened with autoResubscribe: false): close() closes it. */
  constructor(redis: Redis) {
    this.redis = redis
  }

  /** Rejects if Redis is down now; the handlers stay registered and the next reconnect subscribes. */
  async subscribe(handlers: ChangeFeedHandlers): Promise<void> {
    this.handlers = handlers
    this.redis.on('message', (_channel: string, message: string) => {
      const event = parseChangeEvent(message)
      if (event) handlers.onEvent(event)
    })
    this.redis.on('close', () => this.markDown())
    this.redis.on('ready', () => void this.resubscribe().catch(() => {}))
    await this.resubscribe()
  }

  async close(): Promise<void> {
    this.closed = true
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  /** Throws if the connection is down; after the first call, the next `ready` event retries. */
  private async resubscribe(): Promise<void> {
    if (this.closed || !this.handlers) return
    await this.redis.subscribe(redisKeys.changesChannel)
    this.live = true
    this.handlers.onSubscribed()
  }

  private markDown(): void {
    if (!this.live) return
    this.live = false
    if (!this.closed) this.handlers?.onDisconnected()
  }
}
