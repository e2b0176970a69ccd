import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { shardOf } from '../../shared/shards.js'
import type { Store } from '../../shared/store/store.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import { openBackend, startTestVerifier, type TestServer } from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { overriding } from '../support/store-overrides.js'

let redis: RedisServer
let writer: Store
/** A writer whose PUBLISH Redis refuses (ACL): its changes reach the log but never the feed. */
let silentWriter: Store
const open: TestServer[] = []

beforeAll(async () => {
  redis = await startRedisServer()
  await redis.admin.call('ACL', 'SETUSER', 'silent', 'on', 'nopass', '~*', '&*', '+@all', '-publish')
  writer = createRedisStore(await openRedis(redis.url, 'writer'))
  silentWriter = createRedisStore(await openRedis(redis.url.replace('redis://', 'redis://silent:x@'), 'silent-writer'))
})
afterEach(async () => {
  await Promise.all(open.splice(0).map((server) => server.close()))
})
afterAll(async () => {
  await writer.close()
  await silentWriter.close()
  await redis.stop()
})

/** A new key; on `shard` if given (generated until one lands there: 1 in 64). */
async function newKey(shard?: number): Promise<{ key: string; record: KeyRecord }> {
  const api = { id: newId('api'), name: 'sync', createdAt: Date.now() }
  await writer.keys.createApi(api)
  let generated = generateKey('sk')
  while (shard !== undefined && shardOf(generated.hash) !== shard) generated = generateKey('sk')
  const { key, hash, start } = generated
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

async function verifier(store?: Store): Promise<TestServer> {
  const backend = await openBackend(redis.url)
  // No periodic poll: each test proves the path it names, not the once-a-second repair.
  const server = await startTestVerifier({
    backend: store ? { ...backend, store } : backend,
    sync: { pollIntervalMs: 3_600_000 },
  })
  open.push({
    ...server,
    close: async () => {
      await server.close()
      await backend.close()
    },
  })
  return server
}

async function verdict(server: TestServer, key: string) {
  const response = await server.app.inject({
    method: 'POST',
    url: '/v1/keys.verifyKey',
    headers: { 'content-type': 'application/json' },
    payload: { key },
  })
  return { status: response.statusCode, ...response.json<{ valid: boolean; code: string; enabled?: boolean }>() }
}

async function counter(server: TestServer, name: string): Promise<number> {
  const metric = await server.app.inject({ method: 'GET', url: '/metrics' })
  const line = metric.body.split('\n').find((l) => l.startsWith(name))
  return line ? Number(line.split(' ').at(-1)) : 0
}

describe('verifier cache and change feed on Redis', () => {
  it('answers from the cache after the first miss', async () => {
    const server = await verifier()
    const { key } = await newKey()
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    expect(await counter(server, 'keygate_verify_cache_misses_total')).toBe(1)
    expect(await counter(server, 'keygate_verify_cache_hits_total')).toBe(1)
  })

  it('denies a key disabled through another connection, and verifies it again once re-enabled', async () => {
    const server = await verifier()
    const { key, record } = await newKey()
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    const disabled = await writer.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await waitFor(
      async () => (await verdict(server, key)).code === 'DISABLED',
      'the disable to reach the verifier',
      2_000,
      1,
    )
    expect(await verdict(server, key)).toMatchObject({ valid: false, enabled: false })
    await writer.keys.updateKey(record.id, { enabled: true }, disabled!.record.rev, Date.now())
    await waitFor(async () => (await verdict(server, key)).valid, 'the re-enable to reach the verifier', 2_000, 1)
  })

  it('measures publish → applied for each live event, and none for changes replayed from the log', async () => {
    const server = await verifier()
    const { record } = await newKey()
    await waitFor(
      async () => (await counter(server, 'keygate_change_propagation_seconds_count')) === 1,
      'the created event to be measured',
    )
    // Same host, same clock: the time is real and small (not zero, not a clock mix-up of 1000×).
    const seconds = await counter(server, 'keygate_change_propagation_seconds_sum')
    expect(seconds).toBeGreaterThan(0)
    expect(seconds).toBeLessThan(0.5)
    // A change the feed never carried arrives by replay, and carries no publish time to measure.
    const catchUpsBefore = await counter(server, 'keygate_catch_ups_total')
    await silentWriter.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await server.verifier.pollNow()
    expect(await counter(server, 'keygate_catch_ups_total')).toBe(catchUpsBefore + 1)
    expect(await counter(server, 'keygate_change_propagation_seconds_count')).toBe(1)
  })

  it('forgets an unknown key as soon as a key with that hash is created', async () => {
    const server = await verifier()
    const api = { id: newId('api'), name: 'neg', createdAt: Date.now() }
    await writer.keys.createApi(api)
    const { key, hash, start } = generateKey('sk')
    expect(await verdict(server, key)).toMatchObject({ code: 'NOT_FOUND' })
    await writer.keys.createKey({ id: newId('key'), hash, start, apiId: api.id, enabled: true, createdAt: Date.now() })
    await waitFor(
      async () => (await verdict(server, key)).valid,
      'the create event to clear the negative entry',
      2_000,
      1,
    )
  })

  it('never lets a slow miss-read overwrite a newer disable (newer wins)', async () => {
    const { key, record } = await newKey()
    // The read sees the key enabled, then is held back until the disable has been applied.
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let reads = 0
    const slowStore = overriding(writer, {
      keys: {
        getKeyByHash: async (hash: string) => {
          const seen = await writer.keys.getKeyByHash(hash)
          if (reads++ === 0) await held
          return seen
        },
      },
    })
    const server = await verifier(slowStore)
    const pending = verdict(server, key)
    await waitFor(() => reads === 1, 'the first read')
    const before = await counter(server, 'keygate_change_events_total')
    await writer.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await waitFor(async () => (await counter(server, 'keygate_change_events_total')) > before, 'the disable event')
    release()
    expect(await pending).toMatchObject({ valid: false, code: 'DISABLED' })
    expect(reads).toBe(2)
    expect(await verdict(server, key)).toMatchObject({ code: 'DISABLED' })
  })

  it('repairs a lost event from the shard log when the next event shows a revision gap', async () => {
    const server = await verifier()
    const { key, record } = await newKey()
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    const unpublished = await silentWriter.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    expect(unpublished?.publishFailed).toBe(true)
    // Pub/sub lost it: the cache still says valid (issue 3's revision poll bounds this window).
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    const catchUpsBefore = await counter(server, 'keygate_catch_ups_total')
    // A later published change to another key of the same shard reveals the gap; only the replay of the
    // log can tell the verifier about the first key.
    const neighbour = await newKey(unpublished!.event.shard)
    await writer.keys.updateKey(neighbour.record.id, { name: 'touched' }, neighbour.record.rev, Date.now())
    await waitFor(async () => (await verdict(server, key)).code === 'DISABLED', 'the gap repair', 2_000, 1)
    expect(await counter(server, 'keygate_catch_ups_total')).toBeGreaterThan(catchUpsBefore)
  })

  it('resyncs from the log after its subscription is killed', async () => {
    const server = await verifier()
    const { key, record } = await newKey()
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    await silentWriter.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    await redis.admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')
    // Well inside the 5 s staleness bound: only the resync that follows the resubscription can explain a deny.
    await waitFor(async () => (await verdict(server, key)).code === 'DISABLED', 'the resync after reconnect', 2_000, 5)
  })

  it('drops the shard cache when the log was trimmed past its position', async () => {
    const server = await verifier()
    const { key, record } = await newKey()
    expect(await verdict(server, key)).toMatchObject({ valid: true })
    const unpublished = await silentWriter.keys.updateKey(record.id, { enabled: false }, record.rev, Date.now())
    await redis.admin.xtrim(redisKeys.changeLog(unpublished!.event.shard), 'MAXLEN', 0)
    const dropsBefore = await counter(server, 'keygate_cache_drops_total')
    const neighbour = await newKey(unpublished!.event.shard)
    await writer.keys.updateKey(neighbour.record.id, { name: 'touched' }, neighbour.record.rev, Date.now())
    await waitFor(async () => (await verdict(server, key)).code === 'DISABLED', 'the shard drop', 2_000, 1)
    expect(await counter(server, 'keygate_cache_drops_total')).toBeGreaterThan(dropsBefore)
  })
})
