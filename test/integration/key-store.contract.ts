import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import { WriteConflictError } from '../../shared/errors.js'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import { newId } from '../../shared/ids.js'
import { generateKey, hashKey } from '../../shared/key-material.js'
import type { NewKeyRecord } from '../../shared/records.js'
import { shardOf } from '../../shared/shards.js'
import { entityAddress, entityShard } from '../../shared/entity.js'
import { LOG_TRIMMED, type KeyStore } from '../../shared/store/key-store.js'
import { waitFor } from '../support/wait-for.js'
import { rootKeyStoreContract } from './root-key-store.contract.js'

export interface StoreHarness {
  store: KeyStore
  feed: ChangeFeed
  /** Makes the shard's change log keep only its last `keep` entries (as trimming under load would). */
  trimLog(shard: number, keep: number): Promise<void>
  close(): Promise<void>
}

/**
 * The KeyStore + ChangeFeed contract, run against every implementation (memory and Redis): the embedded
 * default must behave exactly like production.
 */
export function keyStoreContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`KeyStore contract: ${name}`, () => {
    let harness: StoreHarness
    let store: KeyStore
    const events: ChangeEvent[] = []
    let subscribedCalls = 0

    beforeAll(async () => {
      harness = await open()
      store = harness.store
      await harness.feed.subscribe({
        onEvent: (e) => events.push(e),
        onSubscribed: () => subscribedCalls++,
        onDisconnected: () => {},
      })
    })
    afterAll(async () => {
      await harness.close()
    })

    async function newApi() {
      const api = { id: newId('api'), name: 'contract', createdAt: Date.now() }
      await store.createApi(api)
      return api
    }

    function newKey(apiId: string, extra: Partial<NewKeyRecord> = {}): NewKeyRecord {
      const { hash, start } = generateKey('t')
      return { id: newId('key'), hash, start, apiId, enabled: true, createdAt: Date.now(), ...extra }
    }

    it('calls onSubscribed once the subscription is live', () => {
      expect(subscribedCalls).toBe(1)
    })

    it('creates, reads and reports absent apis as null', async () => {
      const api = await newApi()
      expect(await store.getApi(api.id)).toEqual(api)
      expect(await store.getApi('api_missing')).toBeNull()
      expect(await store.apiExistsOrDeleting(api.id)).toBe('exists')
    })

    it('tells the verifier whether an api exists: not before it is created, nor once it is being deleted', async () => {
      const id = newId('api')
      expect(await store.apiExists(id)).toBe(false)
      await store.createApi({ id, name: 'bound', createdAt: Date.now() })
      expect(await store.apiExists(id)).toBe(true)
      await store.markApiDeleting(id)
      expect(await store.apiExists(id)).toBe(false)
      await store.removeApi(id)
      expect(await store.apiExists(id)).toBe(false)
    })

    it('hides an api being deleted, then removes it', async () => {
      const api = await newApi()
      expect(await store.markApiDeleting(api.id)).toMatchObject({ id: api.id, deleting: true })
      expect(await store.getApi(api.id)).toBeNull()
      expect(await store.apiExistsOrDeleting(api.id)).toBe('deleting')
      await store.removeApi(api.id)
      expect(await store.apiExistsOrDeleting(api.id)).toBe('absent')
      expect(await store.markApiDeleting(api.id)).toBeNull()
    })

    it('creates a key: record by id and by hash carry the revision of its created event, which is published', async () => {
      const api = await newApi()
      const input = newKey(api.id, { name: 'n', ownerId: 'o', meta: { a: [1, { b: 0.1 }] }, environment: 'live' })
      const write = await store.createKey(input)
      if (!write) throw new Error('create failed')
      expect(write.event).toEqual({
        v: 1,
        shard: shardOf(input.hash),
        epoch: expect.stringMatching(/^.{8,}$/),
        rev: write.record.rev,
        kind: 'created',
        keyId: input.id,
        hash: input.hash,
        apiId: api.id,
      })
      expect(write.record).toEqual({ ...input, rev: write.event.rev })
      expect(await store.getKeyById(input.id)).toEqual(write.record)
      expect(await store.getKeyByHash(input.hash)).toEqual(write.record)
      await waitFor(() => events.find((e) => e.keyId === input.id && e.rev === write.event.rev), 'the created event')
      const published = events.find((e) => e.keyId === input.id)!
      // The published event is the write's, stamped with its publish time (unix µs) for the propagation metric.
      const { at, ...rest } = published
      expect(rest).toEqual(write.event)
      expect(Number.isSafeInteger(at)).toBe(true)
      expect(Math.abs(at! - Date.now() * 1000)).toBeLessThan(5_000_000)
    })

    it('refuses a second key with the same hash and writes nothing', async () => {
      const api = await newApi()
      const input = newKey(api.id)
      await store.createKey(input)
      const revisionBefore = (await store.readRevisions()).shards[shardOf(input.hash)]
      const twin = { ...input, id: newId('key') }
      expect(await store.createKey(twin)).toBe(false)
      expect((await store.readRevisions()).shards[shardOf(input.hash)]).toEqual(revisionBefore)
      expect(await store.getKeyById(twin.id)).toBeNull()
      expect((await store.listKeys(api.id, { limit: 10 })).keys.map((k) => k.id)).toEqual([input.id])
    })

    it('answers null for unknown keys', async () => {
      expect(await store.getKeyById('key_missing')).toBeNull()
      expect(await store.getKeyByHash(hashKey('no such key'))).toBeNull()
      expect(await store.updateKey('key_missing', { enabled: false }, 1, Date.now())).toBeNull()
      expect(await store.deleteKey('key_missing')).toBeNull()
    })

    it('updates with patch semantics (absent = unchanged, null = cleared) and a higher revision', async () => {
      const api = await newApi()
      const created = await store.createKey(newKey(api.id, { name: 'old', ownerId: 'o1', meta: { x: 1 } }))
      if (!created) throw new Error('create failed')
      const write = await store.updateKey(
        created.record.id,
        { name: null, meta: { y: 2 }, enabled: false },
        created.record.rev,
        1234,
      )
      if (!write) throw new Error('update failed')
      expect(write.event.kind).toBe('updated')
      expect(write.event.rev).toBeGreaterThan(created.record.rev)
      const stored = await store.getKeyById(created.record.id)
      expect(stored).toEqual(write.record)
      expect(stored).toMatchObject({
        ownerId: 'o1',
        meta: { y: 2 },
        enabled: false,
        updatedAt: 1234,
        rev: write.event.rev,
      })
      expect(stored).not.toHaveProperty('name')
    })

    it('refuses an update against a stale revision (compare-and-set) and changes nothing', async () => {
      const api = await newApi()
      const created = await store.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      await store.updateKey(created.record.id, { name: 'first' }, created.record.rev, Date.now())
      await expect(
        store.updateKey(created.record.id, { name: 'second' }, created.record.rev, Date.now()),
      ).rejects.toBeInstanceOf(WriteConflictError)
      expect((await store.getKeyById(created.record.id))?.name).toBe('first')
    })

    it('lets exactly one of two concurrent updates against the same revision win', async () => {
      const api = await newApi()
      for (let round = 0; round < 10; round++) {
        const created = await store.createKey(newKey(api.id))
        if (!created) throw new Error('create failed')
        const outcomes = await Promise.allSettled([
          store.updateKey(created.record.id, { name: 'a' }, created.record.rev, Date.now()),
          store.updateKey(created.record.id, { name: 'b' }, created.record.rev, Date.now()),
        ])
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
        const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
        expect(lost.reason).toBeInstanceOf(WriteConflictError)
      }
    })

    it('deletes a key: gone by id, by hash and from its lists, with a deleted event at a new revision', async () => {
      const api = await newApi()
      const input = newKey(api.id, { ownerId: 'owner' })
      const created = await store.createKey(input)
      if (!created) throw new Error('create failed')
      const write = await store.deleteKey(input.id)
      expect(write?.event).toMatchObject({ kind: 'deleted', keyId: input.id, hash: input.hash })
      expect(write!.event.rev).toBeGreaterThan(created.event.rev)
      expect(await store.getKeyById(input.id)).toBeNull()
      expect(await store.getKeyByHash(input.hash)).toBeNull()
      expect((await store.listKeys(api.id, { limit: 10 })).keys).toEqual([])
      expect((await store.listKeys(api.id, { limit: 10, ownerId: 'owner' })).keys).toEqual([])
      expect(await store.deleteKey(input.id)).toBeNull()
    })

    it('lists the hash of every stored key, and none of a deleted key or of anything else stored', async () => {
      const api = await newApi()
      const kept = await Promise.all(Array.from({ length: 30 }, () => store.createKey(newKey(api.id))))
      const gone = await store.createKey(newKey(api.id))
      await store.deleteKey(gone ? gone.record.id : '')
      // Beside them, records of other kinds in the same shards: an entity, a rate-limit window named like a record.
      await store.writeEntity(entityAddress('role', newId('role')), newId('role'), 'created', { name: 'r' })
      const owner = kept[0] ? kept[0].record.hash : ''
      await store.addRateLimitUsage({ group: owner, owner, name: '}:k:not-a-key', duration: 60_000, window: 0 }, 1)
      const hashes = new Set<string>()
      for await (const batch of store.scanKeyHashes()) for (const hash of batch) hashes.add(hash)
      for (const write of kept) expect(hashes.has(write ? write.record.hash : '')).toBe(true)
      expect(hashes.has(gone ? gone.record.hash : '')).toBe(false)
      for (const hash of hashes) expect(await store.getKeyByHash(hash)).not.toBeNull()
    })

    it('keeps per-shard revisions that only grow and match the last write', async () => {
      const api = await newApi()
      const created = await store.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const shard = created.event.shard
      expect((await store.readRevisions()).shards[shard]).toEqual({
        rev: created.event.rev,
        epoch: created.event.epoch,
      })
      const updated = await store.updateKey(created.record.id, { enabled: false }, created.record.rev, Date.now())
      expect(updated!.event.rev).toBe(created.event.rev + 1)
      expect(updated!.event.epoch).toBe(created.event.epoch)
      const revisions = (await store.readRevisions()).shards
      expect(revisions).toHaveLength(64)
      expect(revisions[shard]).toEqual({ rev: updated!.event.rev, epoch: created.event.epoch })
    })

    it('replays a shard log after a revision, in order, and says when it was trimmed past it', async () => {
      const api = await newApi()
      const created = await store.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      let record = created.record
      for (let i = 0; i < 5; i++) {
        const write = await store.updateKey(record.id, { name: `v${i}` }, record.rev, Date.now())
        record = write!.record
      }
      const shard = created.event.shard
      const replay = await store.readChanges(shard, created.event.rev, 100)
      if (replay === LOG_TRIMMED) throw new Error('unexpectedly trimmed')
      expect(replay.map((e) => e.rev)).toEqual(replay.map((e) => e.rev).sort((a, b) => a - b))
      expect(replay.filter((e) => e.keyId === record.id).map((e) => e.kind)).toEqual([
        'updated',
        'updated',
        'updated',
        'updated',
        'updated',
      ])
      expect(replay.at(-1)).toMatchObject({
        rev: record.rev,
        keyId: record.id,
        hash: record.hash,
        apiId: api.id,
        shard,
        v: 1,
        epoch: created.event.epoch,
      })
      expect(await store.readChanges(shard, record.rev, 100)).toEqual([])

      await harness.trimLog(shard, 2)
      expect(await store.readChanges(shard, created.event.rev, 100)).toBe(LOG_TRIMMED)
      const tail = await store.readChanges(shard, record.rev - 2, 100)
      expect(tail).not.toBe(LOG_TRIMMED)
      expect((tail as ChangeEvent[]).map((e) => e.rev)).toEqual([record.rev - 1, record.rev])
    })

    it('lists keys sorted by id with cursor paging, a total, and an owner filter', async () => {
      const api = await newApi()
      const ids: string[] = []
      for (let i = 0; i < 27; i++) {
        const input = newKey(api.id, { ownerId: i % 3 === 0 ? 'acme' : undefined })
        await store.createKey(input)
        ids.push(input.id)
      }
      ids.sort()
      const seen: string[] = []
      let cursor: string | undefined
      for (let page = 0; page < 10; page++) {
        const result = await store.listKeys(api.id, { cursor, limit: 10 })
        expect(result.total).toBe(27)
        seen.push(...result.keys.map((k) => k.id))
        if (result.keys.length < 10) {
          expect(result.cursor).toBeUndefined()
          break
        }
        expect(result.cursor).toBe(result.keys.at(-1)!.id)
        cursor = result.cursor
      }
      expect(seen).toEqual(ids)
      const acme = await store.listKeys(api.id, { limit: 100, ownerId: 'acme' })
      // total counts the api, not the owner: Unkey's listKeys answers so.
      expect(acme.keys).toHaveLength(9)
      expect(acme.total).toBe(27)
      expect(acme.keys.every((k) => k.ownerId === 'acme')).toBe(true)

      // Moving a key to another owner moves it between the owner's lists.
      const moved = acme.keys[0]!
      await store.updateKey(moved.id, { ownerId: 'globex' }, moved.rev, Date.now())
      expect((await store.listKeys(api.id, { limit: 100, ownerId: 'acme' })).keys.map((k) => k.id)).not.toContain(
        moved.id,
      )
      expect((await store.listKeys(api.id, { limit: 100, ownerId: 'globex' })).keys.map((k) => k.id)).toEqual([
        moved.id,
      ])
    })

    rootKeyStoreContract(() => store)

    it('writes an entity in its shard: created once, updated at its revision, deleted, each logged and published', async () => {
      const id = newId('role')
      const address = entityAddress('role', id)
      const shard = entityShard(address)
      const created = await store.writeEntity(address, id, 'created', { id, name: 'contract role' })
      if (typeof created === 'string') throw new Error(created)
      expect(created.event).toMatchObject({ kind: 'created', shard, keyId: id, hash: address, apiId: '' })
      expect(await store.getEntity(address)).toEqual({ doc: { id, name: 'contract role' }, rev: created.rev })
      expect(await store.writeEntity(address, id, 'created', { id })).toBe('exists')
      expect(await store.writeEntity(address, id, 'updated', { id, name: 'stale' }, created.rev - 1)).toBe('conflict')
      const updated = await store.writeEntity(address, id, 'updated', { id, name: 'renamed' }, created.rev)
      if (typeof updated === 'string') throw new Error(updated)
      expect(updated.rev).toBeGreaterThan(created.rev)
      expect((await store.getEntity<{ name: string }>(address))!.doc.name).toBe('renamed')
      const deleted = await store.writeEntity(address, id, 'deleted', null)
      if (typeof deleted === 'string') throw new Error(deleted)
      expect(await store.getEntity(address)).toBeNull()
      expect(await store.writeEntity(address, id, 'updated', { id })).toBe('missing')
      // The same log and revision sequence as keys: a verifier replays entity changes as it does key changes.
      const replayed = await store.readChanges(shard, created.rev - 1, 10)
      if (replayed === LOG_TRIMMED) throw new Error('trimmed')
      expect(replayed.filter((e) => e.hash === address).map((e) => [e.kind, e.rev])).toEqual([
        ['created', created.rev],
        ['updated', updated.rev],
        ['deleted', deleted.rev],
      ])
      await waitFor(() => events.some((e) => e.hash === address && e.kind === 'deleted'), 'the delete to be published')
    })

    it('claims unique names, moves them only from their holder, and lists indexes by member with a cursor', async () => {
      const scope = `contract-${newId('req')}`
      expect(await store.claimName(scope, 'editor', 'role_a')).toBeNull()
      expect(await store.claimName(scope, 'editor', 'role_b')).toBe('role_a')
      expect(await store.readName(scope, 'editor')).toBe('role_a')
      expect(await store.replaceName(scope, 'editor', 'role_b', 'role_c')).toBe(false)
      expect(await store.replaceName(scope, 'editor', 'role_a', 'role_c')).toBe(true)
      await store.releaseName(scope, 'editor', 'role_a')
      expect(await store.readName(scope, 'editor')).toBe('role_c')
      await store.releaseName(scope, 'editor', 'role_c')
      expect(await store.readName(scope, 'editor')).toBeNull()

      for (const member of ['m3', 'm1', 'm2', 'm4']) await store.addToIndex(scope, member)
      await store.removeFromIndex(scope, 'm4')
      const first = await store.listIndex(scope, { limit: 2 })
      expect(first).toEqual({ members: ['m1', 'm2'], total: 3, cursor: 'm2' })
      expect(await store.listIndex(scope, { limit: 2, cursor: first.cursor })).toEqual({ members: ['m3'], total: 3 })
    })

    it('answers ping when it can serve', async () => {
      await expect(store.ping()).resolves.toBeUndefined()
    })
  })
}
