import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { shardOf } from '../../shared/shards.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import type { Store } from '../../shared/store/store.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

/** What a crash between two steps of a write can leave in Redis, and how readers cope with it. */
describe('Redis store after partial writes', () => {
  let redis: RedisServer
  let store: Store
  beforeAll(async () => {
    redis = await startRedisServer()
    store = createRedisStore(await openRedis(redis.url, 'test'))
  })
  afterAll(async () => {
    await store.close()
    await redis.stop()
  })

  it('pages past index pointers whose record was never written, without ending early', async () => {
    const api = { id: newId('api'), name: 'crash', createdAt: Date.now() }
    await store.keys.createApi(api)
    const real: string[] = []
    for (let i = 0; i < 3; i++) {
      // 40 pointers of interrupted creates (recent: they may still be writes in flight) before each key.
      for (let j = 0; j < 40; j++) await redis.admin.zadd(redisKeys.apiKeys(api.id), 0, newId('key'))
      const { hash, start } = generateKey('sk')
      const id = newId('key')
      await store.keys.createKey({ id, hash, start, apiId: api.id, enabled: true, createdAt: Date.now() })
      real.push(id)
    }
    const seen: string[] = []
    let cursor: string | undefined
    for (let page = 0; page < 50; page++) {
      const result = await store.keys.listKeys(api.id, { cursor, limit: 1 })
      seen.push(...result.keys.map((k) => k.id))
      if (!result.cursor) break
      cursor = result.cursor
    }
    expect(seen).toEqual(real)
  })

  it('keeps writing a shard whose revision counter was lost while its log survived', async () => {
    const api = { id: newId('api'), name: 'evicted', createdAt: Date.now() }
    await store.keys.createApi(api)
    const { hash, start } = generateKey('sk')
    const created = await store.keys.createKey({
      id: newId('key'),
      hash,
      start,
      apiId: api.id,
      enabled: true,
      createdAt: Date.now(),
    })
    if (!created) throw new Error('create failed')
    // As an eviction policy other than noeviction could do.
    await redis.admin.del(redisKeys.revision(shardOf(hash)))
    const updated = await store.keys.updateKey(created.record.id, { enabled: false }, created.record.rev, Date.now())
    expect(updated?.event.rev).toBeGreaterThan(created.event.rev)
    expect((await store.keys.getKeyById(created.record.id))?.enabled).toBe(false)
  })
})
