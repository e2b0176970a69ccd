import type { ReplicationSettings } from '../config/settings.js'
import { RedisChangeFeed } from '../feed/redis-change-feed.js'
import { createRedis, type RedisTarget } from './redis-connection.js'
import { RedisKeyStore } from './redis-key-store.js'

export interface RedisBackend {
  store: RedisKeyStore
  feed: RedisChangeFeed
  close(): Promise<void>
}

/**
 * The store and the change feed on Redis, each on its own connection (a subscribed connection can do
 * nothing else). Both connect and reconnect in the background; whoever opens them closes them.
 */
export function openRedisBackend(
  url: string,
  name: string,
  target?: RedisTarget,
  replication?: ReplicationSettings,
): RedisBackend {
  const store = new RedisKeyStore(createRedis(url, name, {}, target), Date.now, replication)
  const feed = new RedisChangeFeed(createRedis(url, `${name}-changes`, { autoResubscribe: false }, target))
  return {
    store,
    feed,
    async close() {
      await feed.close()
      await store.close()
    },
  }
}
