import type { ChangeEvent } from '../change-event.js'

export interface ChangeFeedHandlers {
  /** Each published event, at most once, in publish order per shard while connected. */
  onEvent(event: ChangeEvent): void
  /**
   * The subscription is (again) live. Everything published while it was not was lost: the subscriber must
   * resync from the store. Called once after the first subscribe and after every reconnect.
   */
  onSubscribed(): void
  /** The subscription is down; events published from now until the next onSubscribed are lost. */
  onDisconnected(): void
  /**
   * A credit notice was logged in the shard's notice log (shared/keys/credit-notice.ts), at most once: a hint to read
   * it now, for a subscriber that reads notices (the webhooks' deriver), whose poll of the log stays the truth.
   */
  onCreditNotice?(shard: number): void
}

/**
 * The low-latency path for changes. Delivery is a hint, not a log: at most once, lost while disconnected.
 * The store's per-shard change log is the repair path. Publishing is part of each store write.
 */
export interface ChangeFeed {
  readonly kind: 'redis' | 'memory'
  /** Starts the subscription; resolves once the first onSubscribed has been called. */
  subscribe(handlers: ChangeFeedHandlers): Promise<void>
  close(): Promise<void>
}
