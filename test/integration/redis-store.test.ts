import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey, generateRootKey } from '../../shared/keys/key-material.js'
import { RedisChangeFeed } from '../../shared/feed/redis-change-feed.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import type { Store } from '../../shared/store/store.js'
import type { RevisionSnapshot } from '../../shared/store/change-log/change-log-store.js'
import { SHARD_COUNT, shardOf } from '../../shared/shards.js'
import { CHANGE_SNAPSHOTS_MAX_LEN } from '../../shared/store/change-snapshots/change-snapshot-store.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { startRedisServer, useRedisServer } from '../support/redis-server.js'
import { storeContract } from './store.contract.js'
import { openBackend, type Backend } from '../../shared/store/backend.js'
import { entityAddress, entityShard } from '../../shared/entity.js'
import { windowStart } from '../../shared/ratelimits/ratelimit.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'
import { newRootKey } from './root-key-store.contract.js'
import { newWebhookEndpoint, newWebhookEvent } from './webhook-store.contract.js'
import { webhookDeliveryId, type WebhookDelivery } from '../../shared/webhook.js'

storeContract('redis', async () => {
  const redis = await startRedisServer()
  const store = createRedisStore(await openRedis(redis.url, 'test'))
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

/** A Redis server of the describe's own and a Store on it, opened before its tests and closed after. */
function useRedisStore() {
  const stage = { redis: useRedisServer(), store: undefined as unknown as Store }
  beforeAll(async () => {
    stage.store = createRedisStore(await openRedis(stage.redis.url, 'test'))
  })
  afterAll(async () => {
    await stage.store?.close()
  })
  return stage
}

describe('root keys on Redis: layout, and those stored in the legacy layout (kg:root:<hash>)', () => {
  const stage = useRedisStore()
  const redis = stage.redis

  /** A root key in the legacy layout: one key of its own, outside the root keys' slot. */
  async function legacy(permissions = ['*']) {
    const { key, hash } = generateRootKey()
    const record = { id: newId('root'), hash, name: 'old', permissions, createdAt: Date.now() }
    await redis.admin.set(redisKeys.legacyRootKey(hash), JSON.stringify(record))
    return { key, record }
  }

  it('legacy ones still authenticate, and move into the slot when first looked up', async () => {
    const { record } = await legacy()
    expect(await stage.store.rootKeys.getRootKeyByHash(record.hash)).toEqual(record)
    expect(await redis.admin.exists(redisKeys.legacyRootKey(record.hash))).toBe(0)
    expect(await stage.store.rootKeys.getRootKeyById(record.id)).toEqual(record)
  })

  it('legacy ones are listed where they are: a list writes nothing', async () => {
    const { record: unused } = await legacy(['api.*.read_key'])
    const before = (await redis.admin.keys('*')).sort()
    expect((await stage.store.rootKeys.listRootKeys()).map((k) => k.id)).toContain(unused.id)
    expect((await redis.admin.keys('*')).sort()).toEqual(before)
  })

  it('legacy ones are all moved by the first lookup by id (even those never used), which then stops looking', async () => {
    const { record: unused } = await legacy(['api.*.read_key'])
    const { record: other } = await legacy(['api.*.read_api'])
    expect(await stage.store.rootKeys.getRootKeyById(unused.id)).toEqual(unused)
    for (const record of [unused, other]) expect(await redis.admin.exists(redisKeys.legacyRootKey(record.hash))).toBe(0)
    expect(await redis.admin.get(redisKeys.legacyRootKeysMoved)).toBe('1')
    expect((await stage.store.rootKeys.listRootKeys()).map((k) => k.id)).toEqual(
      expect.arrayContaining([unused.id, other.id]),
    )
    // Revocable like any other.
    expect(await stage.store.rootKeys.revokeRootKey(other.id)).toMatchObject({ id: other.id })
  })

  it('once a control plane has moved them (its start), a list looks for legacy ones no more: no SCAN', async () => {
    // A store no control plane has started on yet.
    await redis.admin.del(redisKeys.legacyRootKeysMoved)
    const { record } = await legacy()
    await stage.store.rootKeys.moveLegacyRootKeys()
    expect(await redis.admin.exists(redisKeys.legacyRootKey(record.hash))).toBe(0)
    const scans = async () => Number(/cmdstat_scan:calls=(\d+)/.exec(await redis.admin.info('commandstats'))?.[1] ?? 0)
    const before = await scans()
    expect((await stage.store.rootKeys.listRootKeys()).map((k) => k.id)).toContain(record.id)
    expect(await scans()).toBe(before)
  })

  it('a revoked legacy one is not listed, even if a copy was left behind', async () => {
    const { record } = await legacy()
    await stage.store.rootKeys.getRootKeyByHash(record.hash)
    await stage.store.rootKeys.revokeRootKey(record.id)
    await redis.admin.set(redisKeys.legacyRootKey(record.hash), JSON.stringify(record))
    await redis.admin.del(redisKeys.legacyRootKeysMoved)
    expect((await stage.store.rootKeys.listRootKeys()).map((k) => k.id)).not.toContain(record.id)
  })

  it('a legacy one cannot come back once revoked, even if a copy was left behind (a move cut short by a crash)', async () => {
    const { record } = await legacy()
    await stage.store.rootKeys.getRootKeyByHash(record.hash)
    await stage.store.rootKeys.revokeRootKey(record.id)
    await redis.admin.set(redisKeys.legacyRootKey(record.hash), JSON.stringify(record))
    expect(await stage.store.rootKeys.getRootKeyByHash(record.hash)).toBeNull()
    expect(await redis.admin.exists(redisKeys.legacyRootKey(record.hash))).toBe(0)
  })

  it('leaves nothing behind for a root key used just after it was revoked (a late last-use write)', async () => {
    const { record } = await legacy()
    await stage.store.rootKeys.getRootKeyByHash(record.hash)
    await stage.store.rootKeys.revokeRootKey(record.id)
    await stage.store.rootKeys.touchRootKey(record.hash, Date.now())
    expect(await redis.admin.hexists(redisKeys.rootKeysUsed, record.hash)).toBe(0)
  })

  it('keeps every root key in one hash slot, so that each write is one atomic script on a Cluster too', () => {
    const slots = [
      redisKeys.rootKeys,
      redisKeys.rootKeyIds,
      redisKeys.rootKeysUsed,
      redisKeys.revokedRootKeys,
      redisKeys.bootstrapRootKey,
      redisKeys.legacyRootKeysMoved,
    ].map((key) => /\{([^}]+)\}/.exec(key)?.[1]) // Redis hashes only the first {…} of a key: its hash tag
    expect(slots).toEqual(slots.map(() => 'root'))
  })
})

describe('a key read by hash on Redis: errors as before the read became one promise', () => {
  const redis = useRedisServer()

  // Only the store's failures are "unavailable" (503, retried): a document that does not parse is a fault of the
  // data, not of the connection, and must not pass for an outage.
  it('rejects a stored document that does not parse with its parse error, and a failed read as unavailable', async () => {
    const store = createRedisStore(await openRedis(redis.url, 'test'))
    await redis.admin.hset(redisKeys.record('h_corrupt'), 'rev', '1', 'doc', '{not json')
    const corrupt = store.keys.getKeyByHash('h_corrupt')
    await expect(corrupt).rejects.toBeInstanceOf(SyntaxError)
    await expect(corrupt).rejects.not.toBeInstanceOf(StoreUnavailableError)
    await redis.admin.hset(redisKeys.record('h_ok'), 'rev', '3', 'doc', '{"id":"key_ok"}', 'credits', '7')
    expect(await store.keys.getKeyByHash('h_ok')).toStrictEqual({ id: 'key_ok', rev: 3, remaining: 7 })
    await store.close()
    await expect(store.keys.getKeyByHash('h_ok')).rejects.toBeInstanceOf(StoreUnavailableError)
  })
})

describe('shard revisions on Redis: one command for all 64 shards', () => {
  const redis = useRedisServer()
  const opened: Store[] = []
  afterAll(async () => {
    await Promise.all(opened.map((store) => store.close()))
  })

  async function storeAs(user?: string): Promise<Store> {
    const url = user ? redis.url.replace('redis://', `redis://${user}:x@`) : redis.url
    const store = createRedisStore(await openRedis(url, 'revisions'))
    opened.push(store)
    return store
  }

  /** Every shard's {rev, epoch} read one by one, as the store read them before. */
  async function expected() {
    return Promise.all(
      Array.from({ length: SHARD_COUNT }, async (_, shard) => {
        const [rev, epoch] = await redis.admin.hmget(redisKeys.revision(shard), 'rev', 'epoch')
        return { rev: rev ? Number(rev) : 0, epoch: epoch ?? '' }
      }),
    )
  }

  /** The commands Redis ran for `read`, by name (this file's own server; the counting INFO left out). */
  async function commandsOf(read: () => Promise<unknown>): Promise<Record<string, number>> {
    const counts = async () =>
      new Map(
        [...(await redis.admin.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)].map(
          ([, name, calls]) => [name!, Number(calls)] as const,
        ),
      )
    const before = await counts()
    await read()
    const after = await counts()
    after.set('info', after.get('info')! - 1)
    return Object.fromEntries(
      [...after].map(([name, n]) => [name, n - (before.get(name) ?? 0)] as const).filter(([, n]) => n > 0),
    )
  }

  async function writeSomeShards(store: Store) {
    const api = { id: newId('api'), name: 'revisions', createdAt: Date.now() }
    await store.keys.createApi(api)
    for (let i = 0; i < 20; i++) {
      const { hash, start } = generateKey('rev')
      await store.keys.createKey({ id: newId('key'), hash, start, apiId: api.id, enabled: true, createdAt: Date.now() })
    }
  }

  it('reads them with one SORT_RO once its set of shard numbers is in place, which the first read puts there', async () => {
    const store = await storeAs()
    await writeSomeShards(store)
    expect(await redis.admin.exists(redisKeys.shardNumbers)).toBe(0)
    expect((await store.changes.readRevisions()).shards).toEqual(await expected())
    expect(await redis.admin.scard(redisKeys.shardNumbers)).toBe(SHARD_COUNT)
    let snapshot: RevisionSnapshot | undefined
    expect(await commandsOf(async () => (snapshot = await store.changes.readRevisions()))).toEqual({
      sort_ro: 1,
      info: 1,
    })
    expect(snapshot!.shards).toEqual(await expected())
    expect(snapshot!.shards.filter((shard) => shard.rev > 0).length).toBeGreaterThan(10)
  })

  it('reads shard by shard, and puts the set right, when it was altered', async () => {
    const store = await storeAs()
    await store.changes.readRevisions()
    await redis.admin.sadd(redisKeys.shardNumbers, '64')
    expect((await store.changes.readRevisions()).shards).toEqual(await expected())
    expect(await commandsOf(() => store.changes.readRevisions())).toEqual({ sort_ro: 1, info: 1 })
  })

  it('reads shard by shard where Redis refuses SORT_RO, or the writing of its set', async () => {
    await redis.admin.call('ACL', 'SETUSER', 'no-sort', 'on', 'nopass', '~*', '&*', '+@all', '-sort_ro')
    await redis.admin.call('ACL', 'SETUSER', 'no-sadd', 'on', 'nopass', '~*', '&*', '+@all', '-sadd')
    await writeSomeShards(await storeAs())
    for (const user of ['no-sort', 'no-sadd']) {
      await redis.admin.del(redisKeys.shardNumbers)
      const store = await storeAs(user)
      expect((await store.changes.readRevisions()).shards).toEqual(await expected())
      expect(await commandsOf(() => store.changes.readRevisions())).toEqual({ hmget: SHARD_COUNT, info: 1 })
    }
  })
})

describe('replicas on Redis: a write that changed a verdict is acknowledged only once they have it (WAIT)', () => {
  const redis = useRedisServer()
  // A lone server: no replica ever confirms. A backend told to wait for one answers each such write as unavailable —
  // its outcome unknown to the caller, though the primary has it —, and a refused write (nothing changed) at once.
  let backend: Backend
  let plain: Store
  beforeAll(async () => {
    backend = openBackend({
      kind: 'redis',
      connections: {
        store: await openRedis(redis.url, 'waiting'),
        feed: await openRedis(redis.url, 'waiting-changes', { autoResubscribe: false }),
      },
      replication: { waitReplicas: 1, timeoutMs: 20 },
    })
    plain = createRedisStore(await openRedis(redis.url, 'plain'))
  })
  afterAll(async () => {
    await backend?.close()
    await plain?.close()
  })

  async function unconfirmed(write: Promise<unknown>): Promise<void> {
    const error = await write.then(
      () => new Error('acknowledged without its replica'),
      (err: unknown) => err,
    )
    expect(error).toBeInstanceOf(StoreUnavailableError)
    expect((error as Error).message).toMatch(/reached 0 of 1 replicas/)
  }

  it('keys: a create, an update and a delete each wait; a create refused (the hash is taken) does not', async () => {
    const waiting = backend.store
    const api = await newApi(plain)
    const input = newKey(api.id)
    await unconfirmed(waiting.keys.createKey(input))
    const created = await plain.keys.getKeyById(input.id)
    expect(created).toMatchObject({ id: input.id })
    expect(await waiting.keys.createKey({ ...newKey(api.id), hash: input.hash })).toBe(false)
    await unconfirmed(waiting.keys.updateKey(input.id, { name: 'renamed' }, created!.rev, Date.now()))
    expect((await plain.keys.getKeyById(input.id))?.name).toBe('renamed')
    await unconfirmed(waiting.keys.deleteKey(input.id))
    expect(await plain.keys.getKeyByHash(input.hash)).toBeNull()
  })

  it('keys: a change of credits waits, and an api created; a change of credits a key does not carry does not', async () => {
    const waiting = backend.store
    const api = { id: newId('api'), name: 'waited', createdAt: Date.now() }
    await unconfirmed(waiting.keys.createApi(api))
    expect(await plain.keys.getApi(api.id)).toMatchObject({ id: api.id })
    const metered = newKey(api.id, { remaining: 5 })
    await plain.keys.createKey(metered)
    // Setting a balance to 0 is how a key is cut off: acknowledged, it must survive a failover as a disable does.
    await unconfirmed(waiting.keys.updateCredits(metered.id, 'set', 0, undefined, Date.now()))
    expect(await plain.keys.getKeyById(metered.id)).toMatchObject({ remaining: 0 })
    const unmetered = newKey(api.id)
    await plain.keys.createKey(unmetered)
    expect(await waiting.keys.updateCredits(unmetered.id, 'increment', 1, undefined, Date.now())).toBeNull()
  })

  it('entities: a create, an update and a delete each wait; a refused write does not', async () => {
    const waiting = backend.store
    const id = newId('role')
    const address = entityAddress('role', id)
    await unconfirmed(waiting.entities.writeEntity(address, id, 'created', { id }))
    const stored = await plain.entities.getEntity(address)
    expect(stored).toMatchObject({ doc: { id } })
    expect(await waiting.entities.writeEntity(address, id, 'created', { id })).toBe('exists')
    expect(await waiting.entities.writeEntity(address, id, 'updated', { id }, stored!.rev - 1)).toBe('conflict')
    await unconfirmed(waiting.entities.writeEntity(address, id, 'updated', { id, name: 'n' }, stored!.rev))
    await unconfirmed(waiting.entities.writeEntity(address, id, 'deleted', null))
    expect(await plain.entities.getEntity(address)).toBeNull()
  })

  it('webhooks: endpoint writes and an enqueue each wait; a replace of no endpoint or a stale one, a delete of none, a queued one do not', async () => {
    const waiting = backend.store
    const endpoint = newWebhookEndpoint()
    await unconfirmed(waiting.webhooks.createEndpoint(endpoint))
    expect(await plain.webhooks.getEndpoint(endpoint.id)).toEqual(endpoint)
    await unconfirmed(waiting.webhooks.replaceEndpoint({ ...endpoint, enabled: false }))
    expect(await plain.webhooks.getEndpoint(endpoint.id)).toMatchObject({ enabled: false })
    expect(await waiting.webhooks.replaceEndpoint(newWebhookEndpoint())).toBe('gone')
    expect(await waiting.webhooks.replaceEndpoint({ ...endpoint, enabled: true })).toBe('changed')
    const event = newWebhookEvent(1)
    await unconfirmed(waiting.webhooks.enqueue(event, [endpoint.id], 1))
    await waiting.webhooks.enqueue(event, [endpoint.id], 1)
    expect(await plain.webhooks.queueDepth()).toBe(1)
    await unconfirmed(waiting.webhooks.deleteEndpoint(endpoint.id))
    expect(await plain.webhooks.getEndpoint(endpoint.id)).toBeNull()
    expect(await waiting.webhooks.deleteEndpoint(endpoint.id)).toBe(false)
  })

  it('root keys: a create, a revoke and a roll each wait; a create refused does not', async () => {
    const waiting = backend.store
    const record = newRootKey()
    await unconfirmed(waiting.rootKeys.createRootKey(record))
    expect(await plain.rootKeys.getRootKeyById(record.id)).toEqual(record)
    expect(await waiting.rootKeys.createRootKey({ ...newRootKey(), hash: record.hash })).toBe(false)
    const next = newRootKey()
    await unconfirmed(waiting.rootKeys.rollRootKey(record.id, next))
    expect(await plain.rootKeys.getRootKeyById(record.id)).toBeNull()
    expect(await plain.rootKeys.getRootKeyById(next.id)).toEqual(next)
    await unconfirmed(waiting.rootKeys.revokeRootKey(next.id))
    expect(await plain.rootKeys.getRootKeyById(next.id)).toBeNull()
  })
})

describe('every part on Redis, when Redis cannot be reached: StoreUnavailableError, whatever the call', () => {
  const redis = useRedisServer()

  // Each part wraps its calls (storeCall): a failure that is not the store's would answer 500, not 503 (retry).
  it('rejects every method of every part as unavailable on a connection that is gone', async () => {
    const store = createRedisStore(await openRedis(redis.url, 'gone'))
    await store.close()
    const now = Date.now()
    const api = { id: newId('api'), name: 'gone', createdAt: now }
    const key = newKey(api.id, { remaining: 1 })
    const root = newRootKey()
    const address = entityAddress('role', 'role_gone')
    const limit = { owner: key.hash, name: 'l', limit: 1, cost: 1, duration: 60_000 }
    const endpoint = newWebhookEndpoint()
    const event = newWebhookEvent(now)
    const delivery = {
      id: webhookDeliveryId(event.id, endpoint.id),
      eventId: event.id,
      endpointId: endpoint.id,
      attempts: 0,
      queuedAt: now,
    }
    const calls: Record<string, () => Promise<unknown>> = {
      'keys.createApi': () => store.keys.createApi(api),
      'keys.getApi': () => store.keys.getApi(api.id),
      'keys.apiExists': () => store.keys.apiExists(api.id),
      'keys.markApiDeleting': () => store.keys.markApiDeleting(api.id),
      'keys.apiExistsOrDeleting': () => store.keys.apiExistsOrDeleting(api.id),
      'keys.removeApi': () => store.keys.removeApi(api.id),
      'keys.createKey': () => store.keys.createKey(key),
      'keys.getKeyById': () => store.keys.getKeyById(key.id),
      'keys.getKeyByHash': () => store.keys.getKeyByHash(key.hash),
      'keys.scanKeyHashes': async () => {
        for await (const batch of store.keys.scanKeyHashes()) void batch
      },
      'keys.updateKey': () => store.keys.updateKey(key.id, { name: 'n' }, 1, now),
      'keys.deleteKey': () => store.keys.deleteKey(key.id),
      'keys.listKeys': () => store.keys.listKeys(api.id, { limit: 10 }),
      'keys.spendCredits': () => store.keys.spendCredits(key.hash, 1, undefined, now),
      'keys.updateCredits': () => store.keys.updateCredits(key.id, 'set', 1, undefined, now),
      'entities.getEntity': () => store.entities.getEntity(address),
      'entities.writeEntity': () => store.entities.writeEntity(address, 'role_gone', 'created', {}),
      'entities.addToIndex': () => store.entities.addToIndex('roles', 'role_gone'),
      'entities.removeFromIndex': () => store.entities.removeFromIndex('roles', 'role_gone'),
      'entities.listIndex': () => store.entities.listIndex('roles', { limit: 10 }),
      'entities.claimName': () => store.entities.claimName('roles', 'n', 'role_gone'),
      'entities.readName': () => store.entities.readName('roles', 'n'),
      'entities.replaceName': () => store.entities.replaceName('roles', 'n', 'role_gone', 'role_other'),
      'entities.releaseName': () => store.entities.releaseName('roles', 'n', 'role_gone'),
      'rootKeys.createRootKey': () => store.rootKeys.createRootKey(root),
      'rootKeys.getRootKeyByHash': () => store.rootKeys.getRootKeyByHash(root.hash),
      'rootKeys.getRootKeyById': () => store.rootKeys.getRootKeyById(root.id),
      'rootKeys.listRootKeys': () => store.rootKeys.listRootKeys(),
      'rootKeys.moveLegacyRootKeys': () => store.rootKeys.moveLegacyRootKeys(),
      'rootKeys.revokeRootKey': () => store.rootKeys.revokeRootKey(root.id),
      'rootKeys.rollRootKey': () => store.rootKeys.rollRootKey(root.id, newRootKey()),
      'rootKeys.touchRootKey': () => store.rootKeys.touchRootKey(root.hash, now),
      'rootKeys.isBootstrapRootKeyDisabled': () => store.rootKeys.isBootstrapRootKeyDisabled(),
      'rootKeys.setBootstrapRootKeyDisabled': () => store.rootKeys.setBootstrapRootKeyDisabled(true),
      'counters.consumeRateLimits': () => store.counters.consumeRateLimits(key.hash, [limit], now),
      'counters.addRateLimitUsage': () =>
        store.counters.addRateLimitUsage(
          { group: key.hash, owner: key.hash, name: 'l', duration: 60_000, window: 0 },
          1,
        ),
      'counters.consumeNamespaceLimit': () => store.counters.consumeNamespaceLimit('ns', 'id', 1, 60_000, 1, now),
      'counters.addNamespaceUsage': () => store.counters.addNamespaceUsage('ns', 'id', 60_000, 0, 1),
      'usageCounters.readCounters': () => store.usageCounters.readCounters(undefined),
      'usageCounters.dropCounters': () => store.usageCounters.dropCounters(['kg:usage:{k}:hour:0']),
      'usageCounters.pendingMove': () => store.usageCounters.pendingMove(),
      'usageCounters.beginMove': () => store.usageCounters.beginMove({ token: 't', rows: [], entries: [] }),
      'usageCounters.endMove': () => store.usageCounters.endMove(),
      'audit.appendAudit': () =>
        store.audit.appendAudit({ at: now, rootKeyId: root.id, action: 'keys.createKey', keyId: key.id }),
      'audit.listAudit': () => store.audit.listAudit({ limit: 10 }),
      'webhooks.createEndpoint': () => store.webhooks.createEndpoint(endpoint),
      'webhooks.getEndpoint': () => store.webhooks.getEndpoint(endpoint.id),
      'webhooks.listEndpoints': () => store.webhooks.listEndpoints(),
      'webhooks.replaceEndpoint': () => store.webhooks.replaceEndpoint(endpoint),
      'webhooks.deleteEndpoint': () => store.webhooks.deleteEndpoint(endpoint.id),
      'webhooks.readCursors': () => store.webhooks.readCursors(),
      'webhooks.writeCursor': () => store.webhooks.writeCursor(0, { epoch: 'e', rev: 1 }),
      'webhooks.placeCursor': () => store.webhooks.placeCursor(0, { epoch: 'e', rev: 1 }),
      'webhooks.readNoticeCursors': () => store.webhooks.readNoticeCursors(),
      'webhooks.writeNoticeCursor': () => store.webhooks.writeNoticeCursor(0, '1-0'),
      'webhooks.placeNoticeCursor': () => store.webhooks.placeNoticeCursor(0, '1-0'),
      'webhooks.enqueue': () => store.webhooks.enqueue(event, [endpoint.id], now),
      'webhooks.getEvent': () => store.webhooks.getEvent(event.id),
      'webhooks.listEvents': () => store.webhooks.listEvents(0, 10),
      'webhooks.pruneEvents': () => store.webhooks.pruneEvents(now),
      'webhooks.claimDue': () => store.webhooks.claimDue(now, 1_000, 10),
      'webhooks.complete': () => store.webhooks.complete(delivery.id),
      'webhooks.retry': () => store.webhooks.retry(delivery.id, 1, now),
      'webhooks.deadLetter': () => store.webhooks.deadLetter(delivery),
      'webhooks.listDead': () => store.webhooks.listDead(endpoint.id, 10),
      'webhooks.queueDepth': () => store.webhooks.queueDepth(),
      'webhooks.recordAttempt': () =>
        store.webhooks.recordAttempt(endpoint.id, {
          deliveryId: delivery.id,
          eventId: event.id,
          eventType: event.type,
          at: now,
          attempt: 1,
          latencyMs: 1,
          outcome: 'retry',
        }),
      'webhooks.listAttempts': () => store.webhooks.listAttempts(endpoint.id, 10),
      'webhooks.schedule': () => store.webhooks.schedule('key.expired:key_gone', now),
      'webhooks.unschedule': () => store.webhooks.unschedule('key.expired:key_gone'),
      'webhooks.claimDeadlines': () => store.webhooks.claimDeadlines(now, 1_000, 10),
      'webhooks.holdLease': () => store.webhooks.holdLease('derive', 'me', 1_000),
      'webhooks.releaseLease': () => store.webhooks.releaseLease('derive', 'me'),
      'changes.readRevisions': () => store.changes.readRevisions(),
      'changes.readChanges': () => store.changes.readChanges(0, 0, 10),
      'changes.readCreditNotices': () => store.changes.readCreditNotices(0, '', 10),
      'changes.lastCreditNoticeIds': () => store.changes.lastCreditNoticeIds(),
      ping: () => store.ping(),
    }
    const answers: Record<string, string> = {}
    for (const [name, call] of Object.entries(calls)) {
      answers[name] = await call().then(
        () => 'answered',
        (err: unknown) =>
          err instanceof StoreUnavailableError ? 'unavailable' : `${(err as Error).name}: ${String(err)}`,
      )
    }
    expect(answers).toEqual(Object.fromEntries(Object.keys(calls).map((name) => [name, 'unavailable'])))
  })
})

describe('rate-limit counters on Redis: where redis-keys.ts puts them, living one duration past their window', () => {
  const stage = useRedisStore()
  const redis = stage.redis

  // Every process on the store (verifiers and control planes of this release and the last, during an upgrade) counts
  // a window in the same key; and a window's counter must go once its window is over.
  it("keeps a key's windows and a namespace's at their keys, each expiring a duration after its window", async () => {
    const MINUTE = 60_000
    const owner = generateKey('t').hash
    const now = Date.now()
    const window = windowStart(MINUTE, now)
    const { counters } = stage.store
    await counters.consumeRateLimits(owner, [{ owner, name: 'exact', limit: 5, cost: 2, duration: MINUTE }], now)
    await counters.addRateLimitUsage({ group: owner, owner, name: 'async', duration: MINUTE, window }, 3)
    await counters.consumeNamespaceLimit('contract', 'user 1', 5, MINUTE, 4, now)
    await counters.addNamespaceUsage('contract', 'user 2', MINUTE, window, 1)
    const expected: [string, string][] = [
      [redisKeys.rateWindow(owner, owner, 'exact', MINUTE, window), '2'],
      [redisKeys.rateWindow(owner, owner, 'async', MINUTE, window), '3'],
      [redisKeys.namespaceWindow('contract', 'user 1', MINUTE, window), '4'],
      [redisKeys.namespaceWindow('contract', 'user 2', MINUTE, window), '1'],
    ]
    for (const [counter, value] of expected) {
      expect(await redis.admin.get(counter), counter).toBe(value)
      const ttl = await redis.admin.pttl(counter)
      // Two durations from the call: past the end of its window (at most one duration away) by one duration.
      expect(ttl, counter).toBeGreaterThan(2 * MINUTE - 60_000)
      expect(ttl, counter).toBeLessThanOrEqual(2 * MINUTE)
    }
  })
})

describe('webhooks on Redis: one hash slot, and what the scripts keep exact', () => {
  const stage = useRedisStore()
  const redis = stage.redis

  it('keeps every webhook key in the `{wh}` slot, so that each step is one script on a Cluster too', async () => {
    const { webhooks } = stage.store
    const endpoint = newWebhookEndpoint()
    const [event, dead] = [newWebhookEvent(1), newWebhookEvent(1)]
    await webhooks.createEndpoint(endpoint)
    await webhooks.writeCursor(3, { epoch: 'e', rev: 1 })
    await webhooks.enqueue(event, [endpoint.id], 1)
    await webhooks.enqueue(dead, [endpoint.id], 1)
    await webhooks.deadLetter({
      id: webhookDeliveryId(dead.id, endpoint.id),
      eventId: dead.id,
      endpointId: endpoint.id,
      attempts: 1,
      queuedAt: 1,
    })
    await webhooks.recordAttempt(endpoint.id, {
      deliveryId: webhookDeliveryId(event.id, endpoint.id),
      eventId: event.id,
      eventType: event.type,
      at: 1,
      attempt: 1,
      latencyMs: 1,
      outcome: 'retry',
    })
    await webhooks.recordAttempt(endpoint.id, {
      deliveryId: webhookDeliveryId('msg_test_1', endpoint.id),
      eventId: 'msg_test_1',
      eventType: 'key.created',
      at: 1,
      attempt: 1,
      latencyMs: 1,
      outcome: 'delivered',
      test: true,
    })
    await webhooks.schedule('key.expired:key_1:1', 1)
    await webhooks.holdLease('derive', 'me', 60_000)
    const keys = (await redis.admin.keys('*')).sort()
    expect(keys).toEqual(
      [
        redisKeys.webhookEndpoints,
        redisKeys.webhookCursors,
        redisKeys.webhookEvents,
        redisKeys.webhookEventTimes,
        redisKeys.webhookDeliveries,
        redisKeys.webhookQueue(endpoint.id),
        redisKeys.webhookQueuedEndpoints,
        redisKeys.webhookAttempts(endpoint.id),
        redisKeys.webhookTests(endpoint.id),
        redisKeys.webhookDead(endpoint.id),
        redisKeys.webhookDeadlines,
        redisKeys.webhookLease('derive'),
      ].sort(),
    )
    // Redis hashes only the first {…} of a key: its hash tag.
    expect(new Set(keys.map((key) => /\{([^}]+)\}/.exec(key)?.[1]))).toEqual(new Set(['wh']))
  })

  // A Redis written by a release with the single queue (kg:{wh}:due) keeps what it had queued: claims move it into
  // the per-endpoint queues, and until then complete, retry and deadLetter find it where it is.
  it('moves deliveries queued in the single queue of earlier releases into per-endpoint queues, none lost', async () => {
    const { webhooks } = stage.store
    const [one, two] = [newWebhookEndpoint(), newWebhookEndpoint()]
    await webhooks.createEndpoint(one)
    const events = Array.from({ length: 5 }, (_, i) => newWebhookEvent(10 + i))
    const legacy = events.map((event, i) => ({
      attempts: i,
      id: webhookDeliveryId(event.id, i % 2 ? two.id : one.id),
      eventId: event.id,
      endpointId: i % 2 ? two.id : one.id,
      queuedAt: 10 + i,
    }))
    for (const delivery of legacy) {
      await redis.admin.hset(redisKeys.webhookDeliveries, delivery.id, JSON.stringify(delivery))
      await redis.admin.zadd(redisKeys.webhookLegacyDue, delivery.queuedAt, delivery.id)
    }
    const depth = await webhooks.queueDepth()
    await webhooks.retry(legacy[0]!.id, 7, 20)
    await webhooks.complete(legacy[1]!.id)
    await webhooks.deadLetter(legacy[2]!)
    // Queued again by a deriver of this release: still queued once, as it was.
    await webhooks.enqueue(events[3]!, [two.id], 11)
    expect(await webhooks.queueDepth()).toBe(depth - 2)
    // What the other tests here queued is due from 1 on: only these endpoints' deliveries are looked for.
    const theirs = (claimed: WebhookDelivery[]) => claimed.filter((d) => [one.id, two.id].includes(d.endpointId))
    expect(theirs(await webhooks.claimDue(14, 1_000, 100))).toEqual([legacy[3], legacy[4]])
    expect(await redis.admin.exists(redisKeys.webhookLegacyDue)).toBe(0)
    expect(theirs(await webhooks.claimDue(20, 1_000, 100))).toEqual([{ ...legacy[0], attempts: 7 }])
    expect(await webhooks.listDead(one.id, 10)).toEqual([legacy[2]])
    expect(await webhooks.queueDepth()).toBe(depth - 2)
  })

  // The retry script rewrites a delivery's attempts in its json: the other numbers stay as they were written, even
  // those cjson would round (it encodes 14 significant digits).
  it('keeps a delivery exactly as queued through retries', async () => {
    const { webhooks } = stage.store
    const endpoint = newWebhookEndpoint()
    const queuedAt = 123_456_789_012_345
    const event = newWebhookEvent(queuedAt)
    await webhooks.enqueue(event, [endpoint.id], queuedAt)
    await webhooks.retry(webhookDeliveryId(event.id, endpoint.id), 12, queuedAt)
    const claimed = await webhooks.claimDue(queuedAt, 1_000, 10)
    expect(claimed.filter((delivery) => delivery.endpointId === endpoint.id)).toEqual([
      {
        id: webhookDeliveryId(event.id, endpoint.id),
        eventId: event.id,
        endpointId: endpoint.id,
        attempts: 12,
        queuedAt,
      },
    ])
  })

  // Pruning goes a batch of events per script call (never holding Redis long): it goes on until none is left.
  it('forgets every event older than the retention, however many batches that takes', async () => {
    const { webhooks } = stage.store
    const events = Array.from({ length: 1_201 }, (_, i) => newWebhookEvent(10_000 + i))
    await Promise.all(events.map((event) => webhooks.enqueue(event, [], 10_000)))
    const kept = newWebhookEvent(20_000)
    await webhooks.enqueue(kept, [], 20_000)
    await webhooks.pruneEvents(20_000)
    expect(await webhooks.listEvents(0, 1)).toEqual([kept])
    expect(await redis.admin.zcount(redisKeys.webhookEventTimes, '-inf', '(20000')).toBe(0)
    const ids = events.map((event) => event.id)
    expect(await redis.admin.hmget(redisKeys.webhookEvents, ...ids)).toEqual(ids.map(() => null))
  })

  it("runs a lease on Redis' clock: renewing it sets its whole ttl again", async () => {
    const { webhooks } = stage.store
    const lease = redisKeys.webhookLease('renewed')
    expect(await webhooks.holdLease('renewed', 'me', 10_000)).toBe(true)
    expect(await redis.admin.pttl(lease)).toBeLessThanOrEqual(10_000)
    expect(await webhooks.holdLease('renewed', 'me', 60_000)).toBe(true)
    expect(await redis.admin.pttl(lease)).toBeGreaterThan(50_000)
    expect(await redis.admin.get(lease)).toBe('me')
  })
})

describe('a Redis backend: close() closes the feed and the store', () => {
  const redis = useRedisServer()

  it('quits both connections', async () => {
    const connections = {
      store: await openRedis(redis.url, 'backend-store'),
      feed: await openRedis(redis.url, 'backend-changes', { autoResubscribe: false }),
    }
    const backend = openBackend({ kind: 'redis', connections })
    await backend.feed.subscribe({ onEvent: () => {}, onSubscribed: () => {}, onDisconnected: () => {} })
    const ended: string[] = []
    connections.store.once('end', () => ended.push('store'))
    connections.feed.once('end', () => ended.push('feed'))
    await backend.close()
    await waitFor(() => ended.length === 2, 'both connections to end', 2_000)
    expect(ended.sort()).toEqual(['feed', 'store'])
  })

  it('a feed closed while it subscribes calls no handler and leaves no heartbeat timer behind', async () => {
    const feed = new RedisChangeFeed(await openRedis(redis.url, 'closed-early', { autoResubscribe: false }))
    let subscribed = 0
    const subscribing = feed.subscribe({
      onEvent: () => {},
      onSubscribed: () => subscribed++,
      onDisconnected: () => {},
    })
    // SUBSCRIBE is on the wire: its reply comes after close() began.
    await feed.close()
    await subscribing
    expect(subscribed).toBe(0)
    // The feed's own heartbeat timer, not a count of the process's timers (other tests' come and go meanwhile).
    expect((feed as unknown as { heartbeat?: NodeJS.Timeout }).heartbeat).toBeUndefined()
  })
})

describe('change snapshots on Redis: capped, and never one of a lost sequence', () => {
  const stage = useRedisStore()
  /** A key of the api whose record falls in `shard`. */
  const keyInShard = (apiId: string, shard: number) => {
    for (;;) {
      const key = newKey(apiId)
      if (shardOf(key.hash) === shard) return key
    }
  }

  it('keeps at most about CHANGE_SNAPSHOTS_MAX_LEN a shard while nothing forgets them', async () => {
    const { store, redis } = stage
    const api = await newApi(store)
    const created = await store.keys.createKey(keyInShard(api.id, 7))
    if (!created) throw new Error('create failed')
    let rev = created.record.rev
    for (let i = 0; i < 3 * CHANGE_SNAPSHOTS_MAX_LEN; i++)
      rev = (await store.keys.updateKey(created.record.id, { name: `n${i}` }, rev, Date.now()))!.record.rev
    // Approximate trimming keeps whole stream nodes (100 entries each): the cap, and at most a node beyond it.
    const kept = await redis.admin.xlen(redisKeys.changeSnapshots(7))
    expect(kept).toBeGreaterThanOrEqual(CHANGE_SNAPSHOTS_MAX_LEN)
    expect(kept).toBeLessThanOrEqual(CHANGE_SNAPSHOTS_MAX_LEN + 100)
    // The newest are those kept.
    expect((await store.snapshots.readSnapshots(7, rev - 1, rev)).get(rev)?.doc).toMatchObject({
      name: `n${3 * CHANGE_SNAPSHOTS_MAX_LEN - 1}`,
    })
  })

  it("drops a shard's snapshots with its revision counter: a new epoch's revisions are other changes", async () => {
    const { store, redis } = stage
    const api = await newApi(store)
    const old = await store.keys.createKey(keyInShard(api.id, 9))
    if (!old) throw new Error('create failed')
    await store.keys.updateKey(old.record.id, { name: 'n' }, old.record.rev, Date.now())
    // Redis lost the shard's counter and log (a restart without persistence), not its snapshots.
    await redis.admin.del(redisKeys.revision(9), redisKeys.changeLog(9))
    // The new sequence's first change is of a record that keeps no snapshot (a role): rev 1 again, and none of it.
    let roleId = newId('role')
    while (entityShard(entityAddress('role', roleId)) !== 9) roleId = newId('role')
    const role = await store.entities.writeEntity(entityAddress('role', roleId), roleId, 'created', { id: roleId })
    if (typeof role === 'string') throw new Error(role)
    expect(role.rev).toBe(1)
    expect((await store.snapshots.readSnapshots(9, 0, 1)).size).toBe(0)
    const fresh = await store.keys.createKey(keyInShard(api.id, 9))
    if (!fresh) throw new Error('create failed')
    const kept = await store.snapshots.readSnapshots(9, 0, 2)
    expect([...kept.keys()]).toEqual([2])
    expect(kept.get(2)?.doc).toMatchObject({ id: fresh.record.id })
  })
})
