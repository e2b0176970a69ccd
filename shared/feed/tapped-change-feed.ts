import type { ChangeFeed, ChangeFeedHandlers } from './change-feed.js'

/** What a tap hears of a feed: its events, its credit notice hints, and each time it is (again) subscribed. */
export type ChangeFeedTap = Pick<ChangeFeedHandlers, 'onEvent' | 'onSubscribed'> &
  Required<Pick<ChangeFeedHandlers, 'onCreditNotice'>>

/**
 * The feed, with what its subscriber hears also told to `tap`, after the subscriber: a second listener in the same
 * process on the same subscription (a feed has one subscriber), so that it costs Redis nothing more. The tap hears
 * nothing while no one subscribes.
 */
export function tapChangeFeed(feed: ChangeFeed, tap: ChangeFeedTap): ChangeFeed {
  return {
    kind: feed.kind,
    subscribe: (handlers) =>
      feed.subscribe({
        onEvent: (event) => {
          handlers.onEvent(event)
          tap.onEvent(event)
        },
        onSubscribed: () => {
          handlers.onSubscribed()
          tap.onSubscribed()
        },
        onDisconnected: () => handlers.onDisconnected(),
        onCreditNotice: (shard) => {
          handlers.onCreditNotice?.(shard)
          tap.onCreditNotice(shard)
        },
      }),
    close: () => feed.close(),
  }
}
