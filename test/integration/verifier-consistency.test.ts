import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import { RedisChangeFeed } from '../../shared/feed/redis-change-feed.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Store } from '../../shared/store/store.js'
import { shardOf } from '../../shared/shards.js'
import { connectionOptions, openRedis } from '../../shared/store/redis/redis-connection.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import { KeyVerifier } from '../../verifier/key-verifier.js'
import {
  DEFAULT_SYNC,
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
} from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { overriding } from '../support/store-overrides.js'

let redis: RedisServer
let writer: Store
let silentWriter: Store

beforeAll(async () => {
  redis = await startRedisServer()
  await redis.admin.call('ACL', 'SETUSER', 'silent', 'on', 'nopass', '~*', '&*', '+@all', '-publish')
  writer = createRedisStore(await openRedis(redis.url, 'writer'))
  silentWriter = createRedisStore(await openRedis(redis.url.replace('redis://', 'redis://silent:x@'), 'silent-writer'))
})
afterAll(async () => {
  await writer.close()
  await silentWriter.close()
  await redis.stop()
})

async function newKey(): Promise<{ key: string; record: KeyRecord }> {
  const api = { id: newId('api'), name: 'consistency', createdAt: Date.now() }
  await writer.keys.createApi(api)
  const { key, hash, start } = generateKey('sk')
  const write = await writer.keys.createKey({
    id: newId('key'),
    hash,
    start,
    apiId: api.id,
    enabled: true,
    createdAt: Date.now(),
  })
  if (!write) throw new Error('create failed')
  return { key, record: write.record }
}

describe('the verifier never trusts a cache it cannot show is current', () => {
  it('forgets reads made before its first sync (a change between them and the subscription is not replayed)', async () => {
    const store = createRedisStore(await openRedis(redis.url, 'early-store'))
    // The subscriber's connection comes up late, as when the two connections race at boot.
    const lateConnection = new Redis(redis.url, {
      ...connectionOptions('late-feed'),
      lazyConnect: true,
      autoResubscribe: false,
    })
    lateConnection.on('error', () => {})
    const feed = new RedisChangeFeed(lateConnection)
    const verifier = new KeyVerifier({
      store,
      feed,
      clock: { now: () => Date.now() },
      elapsed: { now: () => performance.now() },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      cache: { maxKeys: 100, maxUnknown: 100, unknownTtlMs: 60_000 },
      sync: DEFAULT_SYNC,
    })
    const started = verifier.start()
    const { key, record } = await newKey()

    expect(verifier.ready).toBe(false)
    expect(await verifier.verify(key, {})).toMatchObject({ valid: true })
    await writer.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await lateConnection.connect()
    await started
    expect(verifier.ready).toBe(true)
    expect(await verifier.verify(key, {})).toMatchObject({ valid: false, code: 'DISABLED' })

    await verifier.stop()
    await feed.close()
    await store.close()
  })

  it('after a reconnect whose resync cannot complete, stops trusting the cache at the bound and reads through', async () => {
    const backend = await openBackend(redis.url)
    let hold: Promise<void> | undefined
    const gated = overriding(backend.store, {
      changes: {
        readRevisions: async () => {
          if (hold) await hold
          return backend.store.changes.readRevisions()
        },
      },
    })
    const clock = new ManualClock(Date.now())
    const server = await startTestVerifier({
      backend: { ...backend, store: gated },
      clock,
      sync: { maxStalenessMs: 5_000, pollIntervalMs: 3_600_000 },
    })
    const { key, record } = await newKey()
    const verdict = async () =>
      (
        await server.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: { 'content-type': 'application/json' },
          payload: { key },
        })
      ).json()
    expect(await verdict()).toMatchObject({ valid: true })

    let release!: () => void
    hold = new Promise((resolve) => (release = resolve))
    // A disable the feed never delivers, then a reconnect whose resync poll hangs.
    await silentWriter.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    await waitFor(
      async () => ((await redis.admin.call('PUBSUB', 'NUMSUB', 'kg:changes')) as [string, number])[1] === 1,
      'the resubscription',
    )
    // Within the bound the cache may still answer (that is the promise: no longer than the bound) …
    clock.advance(5_000)
    expect(server.verifier.ready).toBe(true)
    // … and past it, never.
    clock.advance(1)
    expect(server.verifier.ready).toBe(false)
    expect((await server.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
    expect(await verdict()).toMatchObject({ valid: false, code: 'DISABLED' })

    hold = undefined
    release()
    await server.verifier.pollNow()
    expect(server.verifier.ready).toBe(true)
    expect(await verdict()).toMatchObject({ valid: false, code: 'DISABLED' })
    await server.close()
    await backend.close()
  })

  it('drops a shard whose epoch changed even when its counter has climbed past where it was (Redis lost its data)', async () => {
    const clock = new ManualClock(Date.now())
    const server = await startTestVerifier({
      redisUrl: redis.url,
      clock,
      sync: { maxStalenessMs: 5_000, pollIntervalMs: 3_600_000 },
    })
    const { key, record } = await newKey()
    expect((await server.verifier.verify(key, {})).valid).toBe(true)
    const shard = shardOf(record.hash)
    // Redis loses everything; before the verifier polls, new writes push the shard's counter past its old value.
    await redis.admin.flushall()
    const api = { id: newId('api'), name: 'after-loss', createdAt: Date.now() }
    await writer.keys.createApi(api)
    for (let written = 0; written <= record.rev + 1;) {
      const { hash, start } = generateKey('sk')
      if (shardOf(hash) !== shard) continue
      // The same writer that made the shard's first epoch: the epoch must still change.
      const keyRecord = { id: newId('key'), hash, start, apiId: api.id, enabled: true, createdAt: Date.now() }
      await writer.keys.createKey(keyRecord)
      written++
    }
    expect((await writer.changes.readRevisions()).shards[shard]!.rev).toBeGreaterThan(record.rev)
    await server.verifier.pollNow()
    expect(await server.verifier.verify(key, {})).toMatchObject({ valid: false, code: 'NOT_FOUND' })
    await server.close()
  })

  it('lets the control plane read its own writes without waiting for the published event', async () => {
    const backend = await openBackend(redis.url)
    // The control plane's feed subscribes but never delivers an event: only read-your-writes can help.
    const deaf: ChangeFeed = {
      kind: 'redis',
      subscribe: (handlers) => backend.feed.subscribe({ ...handlers, onEvent: () => {} }),
      close: () => backend.feed.close(),
    }
    const server = await startTestControlPlane({ backend: { ...backend, feed: deaf } })
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    const post = async (path: string, payload: object) =>
      (await server.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const { apiId } = await post('apis.createApi', { name: 'ryw' })
    const { keyId, key } = await post('keys.createKey', { apiId })
    expect(await post('keys.verifyKey', { key })).toMatchObject({ valid: true })
    await post('keys.updateKey', { keyId, enabled: false })
    expect(await post('keys.verifyKey', { key })).toMatchObject({ valid: false, code: 'DISABLED' })
    await post('keys.updateKey', { keyId, enabled: true })
    expect(await post('keys.verifyKey', { key })).toMatchObject({ valid: true })
    await post('keys.deleteKey', { keyId })
    expect(await post('keys.verifyKey', { key })).toMatchObject({ valid: false, code: 'NOT_FOUND' })
    await server.close()
    await backend.close()
  })
})
