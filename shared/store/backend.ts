import type { ReplicationSettings } from '../config/settings.js'
import type { ChangeFeed } from '../feed/change-feed.js'
import { MemoryChangeFeed } from '../feed/memory-change-feed.js'
import { RedisChangeFeed } from '../feed/redis-change-feed.js'
import { createMemoryStore } from './memory-store.js'
import { createRedis, type RedisClient, type RedisTarget } from './redis/redis-connection.js'
import { createRedisStore } from './redis-store.js'
import type { Store } from './store.js'

/** A store and the change feed its writes publish on; close() closes both. */
export interface Backend {
  store: Store
  feed: ChangeFeed
  close(): Promise<void>
}

/** The Redis connections of a backend: the store's, and the feed's (a subscribed connection can do nothing else). */
export interface RedisConnections {
  store: RedisClient
  feed: RedisClient
}

export type BackendSource =
  { kind: 'memory' } | { kind: 'redis'; connections: RedisConnections; replication?: ReplicationSettings }

/**
 * The one place a store is chosen: in process memory (with its feed), or on Redis, every part of the store on one
 * connection and the feed on another, both taken over: the backend's close() closes them.
 */
export function openBackend(source: BackendSource): Backend {
  if (source.kind === 'memory') {
    const feed = new MemoryChangeFeed()
    return withClose(createMemoryStore(feed), feed)
  }
  const { connections, replication } = source
  return withClose(createRedisStore(connections.store, { replication }), new RedisChangeFeed(connections.feed))
}

/**
 * The connections of a server's backend, named `name` and `<name>-changes`: they connect and reconnect in the
 * background, so a server starts while Redis is down and says so through readiness.
 */
export function redisConnections(url: string, name: string, target?: RedisTarget): RedisConnections {
  return {
    store: createRedis(url, name, {}, target),
    feed: createRedis(url, `${name}-changes`, { autoResubscribe: false }, target),
  }
}

function withClose(store: Store, feed: ChangeFeed): Backend {
  return {
    store,
    feed,
    async close() {
      await feed.close()
      await store.close()
    },
  }
}
