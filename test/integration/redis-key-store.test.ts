import { RedisChangeFeed } from '../../shared/feed/redis-change-feed.js'
import { openRedis } from '../../shared/store/redis-connection.js'
import { redisKeys } from '../../shared/store/redis-keys.js'
import { RedisKeyStore } from '../../shared/store/redis-key-store.js'
import { startRedisServer } from '../support/redis-server.js'
import { keyStoreContract } from './key-store.contract.js'

keyStoreContract('redis', async () => {
  const redis = await startRedisServer()
  const store = new RedisKeyStore(await openRedis(redis.url, 'test'))
  const feed = new RedisChangeFeed(await openRedis(redis.url, 'test-changes', { autoResubscribe: false }))
  return {
    store,
    feed,
    async trimLog(shard: number, keep: number) {
      await redis.admin.xtrim(redisKeys.changeLog(shard), 'MAXLEN', keep)
    },
    async close() {
      await feed.close()
      await store.close()
      await redis.stop()
    },
  }
})
