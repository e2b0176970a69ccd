import { afterAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { shardOf } from '../../shared/shards.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import type { Store } from '../../shared/store/store.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import { ManualClock, openBackend, startTestVerifier } from '../support/apps.js'
import { overriding } from '../support/store-overrides.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const manualPolls = { maxStalenessMs: 5_000, pollIntervalMs: 3_600_000 }

async function issue(store: Store, apiId: string, shard?: number): Promise<{ key: string; record: KeyRecord }> {
  let generated = generateKey('sk')
  while (shard !== undefined && shardOf(generated.hash) !== shard) generated = generateKey('sk')
  const write = await store.keys.createKey({
    id: newId('key'),
    hash: generated.hash,
    start: generated.start,
    apiId,
    enabled: true,
    createdAt: Date.now(),
  })
  if (!write) throw new Error('create failed')
  return { key: generated.key, record: write.record }
}

describe('data rolled back under the verifier', () => {
  let redis: RedisServer
  afterAll(async () => {
    await redis?.stop()
  })

  it('drops the whole cache when Redis comes back as another instance (restored from an older snapshot)', async () => {
    redis = await startRedisServer({ args: ['--dbfilename', 'dump.rdb'] })
    const writer = createRedisStore(await openRedis(redis.url, 'writer'))
    const api = { id: newId('api'), name: 'rollback', createdAt: Date.now() }
    await writer.keys.createApi(api)
    const target = await issue(writer, api.id)
    const neighbour = await issue(writer, api.id, target.record.hash ? shardOf(target.record.hash) : 0)
    await redis.admin.save()
    // After the snapshot: one more write the verifier sees; the restore will take it back.
    const renamed = await writer.keys.updateKey(
      target.record.id,
      { name: 'after-snapshot' },
      target.record.rev,
      Date.now(),
    )
    // A feed that announces its first subscription only: no automatic poll after the restart, so nothing but
    // the instance check in the poll below can tell the restored data from the data the verifier saw.
    const backend = await openBackend(redis.url)
    let announced = false
    const quiet: ChangeFeed = {
      kind: 'redis',
      subscribe: (handlers) =>
        backend.feed.subscribe({
          ...handlers,
          onSubscribed: () => {
            if (!announced) handlers.onSubscribed()
            announced = true
          },
        }),
      close: () => backend.feed.close(),
    }
    const server = await startTestVerifier({ backend: { ...backend, feed: quiet }, sync: manualPolls })
    expect(await server.verifier.verify(target.key, {})).toMatchObject({ valid: true, name: 'after-snapshot' })

    const { port, dir } = redis
    await redis.stop({ keepDir: true })
    redis = await startRedisServer({ port, dir, args: ['--dbfilename', 'dump.rdb'] })
    // The same epoch and lower revisions: the disable reuses the revision the verifier already holds, and a
    // write to the neighbour pushes the counter past the verifier's position.
    await waitFor(
      async () =>
        await writer.ping().then(
          () => true,
          () => false,
        ),
      'the writer to reconnect',
      5_000,
      20,
    )
    const restored = await writer.keys.getKeyById(target.record.id)
    expect(restored?.rev).toBeLessThan(renamed!.record.rev)
    const disabled = await writer.keys.updateKey(target.record.id, { enabled: false }, restored!.rev, Date.now())
    expect(disabled!.event.rev).toBe(renamed!.record.rev)
    await writer.keys.updateKey(neighbour.record.id, { name: 'push' }, neighbour.record.rev, Date.now())

    await waitFor(
      async () =>
        await server.verifier.pollNow().then(
          () => true,
          () => false,
        ),
      'a poll of the restarted Redis',
      4_000,
      50,
    )
    expect(await server.verifier.verify(target.key, {})).toMatchObject({ valid: false, code: 'DISABLED' })
    await server.close()
    await backend.close()
    await writer.close()
  })
})

describe('a catch-up that fails', () => {
  it('never confirms the cache, so past the bound the verifier reads through', async () => {
    const backend = await openBackend()
    let failReplays = false
    const store = overriding(backend.store, {
      changes: {
        readChanges: async (...args) => {
          if (failReplays) throw new StoreUnavailableError('log unreachable (injected)')
          return backend.store.changes.readChanges(...args)
        },
      },
    })
    const clock = new ManualClock(Date.now())
    // A feed that never delivers: the poll is the only way the verifier can learn of the disable.
    const deaf = {
      kind: 'memory' as const,
      subscribe: async (handlers: { onSubscribed(): void }) => handlers.onSubscribed(),
      close: async () => {},
    }
    const server = await startTestVerifier({ backend: { ...backend, store, feed: deaf }, clock, sync: manualPolls })
    const api = { id: newId('api'), name: 'catch-up', createdAt: Date.now() }
    await backend.store.keys.createApi(api)
    const { key, record } = await issue(backend.store, api.id)
    await server.verifier.pollNow()
    expect((await server.verifier.verify(key, {})).valid).toBe(true)

    await backend.store.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    failReplays = true
    await expect(server.verifier.pollNow()).rejects.toThrow('log unreachable')
    clock.advance(5_000)
    expect(server.verifier.ready).toBe(true)
    clock.advance(1)
    expect(server.verifier.ready).toBe(false)
    expect(await server.verifier.verify(key, {})).toMatchObject({ valid: false, code: 'DISABLED' })

    failReplays = false
    await server.verifier.pollNow()
    expect(server.verifier.ready).toBe(true)
    expect(await server.verifier.verify(key, {})).toMatchObject({ valid: false, code: 'DISABLED' })
    await server.close()
    await backend.close()
  })
})
