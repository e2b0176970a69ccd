import type { ChangeEvent } from '../change-event.js'
import type { ChangeFeed, ChangeFeedHandlers } from './change-feed.js'

/** In-process change feed for the embedded default: synchronous, in order, never lost while subscribed. */
export class MemoryChangeFeed implements ChangeFeed {
  readonly kind = 'memory' as const
  private readonly subscribers = new Set<ChangeFeedHandlers>()

  async subscribe(handlers: ChangeFeedHandlers): Promise<void> {
    this.subscribers.add(handlers)
    handlers.onSubscribed()
  }

  /** Called by the memory store as part of each write. */
  publish(event: ChangeEvent): void {
    for (const subscriber of this.subscribers) subscriber.onEvent({ ...event })
  }

  /** Called by the memory store when it logs a credit notice in `shard`. */
  publishCreditNotice(shard: number): void {
    for (const subscriber of this.subscribers) subscriber.onCreditNotice?.(shard)
  }

  async close(): Promise<void> {
    for (const subscriber of this.subscribers) subscriber.onDisconnected()
    this.subscribers.clear()
  }
}
