import { beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import { MAX_CREDITS } from '../../shared/keys/credits.js'
import { entityAddress } from '../../shared/entity.js'
import { WriteConflictError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { shardOf } from '../../shared/shards.js'
import type { Store } from '../../shared/store/store.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * The ApiKeyStore contract (api-key-store.ts: `store.keys`), run by the store's contract on every implementation:
 * `events` are those the store's feed delivered.
 */
export function apiKeyStoreContract(opened: () => Store, events: readonly ChangeEvent[]): void {
  describe('apis and keys', () => {
    let store: Store
    beforeAll(() => void (store = opened()))

    it('creates, reads and reports absent apis as null', async () => {
      const api = await newApi(store)
      expect(await store.keys.getApi(api.id)).toEqual(api)
      expect(await store.keys.getApi('api_missing')).toBeNull()
      expect(await store.keys.apiExistsOrDeleting(api.id)).toBe('exists')
    })

    it('tells the verifier whether an api exists: not before it is created, nor once it is being deleted', async () => {
      const id = newId('api')
      expect(await store.keys.apiExists(id)).toBe(false)
      await store.keys.createApi({ id, name: 'bound', createdAt: Date.now() })
      expect(await store.keys.apiExists(id)).toBe(true)
      await store.keys.markApiDeleting(id)
      expect(await store.keys.apiExists(id)).toBe(false)
      await store.keys.removeApi(id)
      expect(await store.keys.apiExists(id)).toBe(false)
    })

    it('hides an api being deleted, then removes it', async () => {
      const api = await newApi(store)
      expect(await store.keys.markApiDeleting(api.id)).toMatchObject({ id: api.id, deleting: true })
      expect(await store.keys.getApi(api.id)).toBeNull()
      expect(await store.keys.apiExistsOrDeleting(api.id)).toBe('deleting')
      await store.keys.removeApi(api.id)
      expect(await store.keys.apiExistsOrDeleting(api.id)).toBe('absent')
      expect(await store.keys.markApiDeleting(api.id)).toBeNull()
    })

    it('creates a key: record by id and by hash carry the revision of its created event, which is published', async () => {
      const api = await newApi(store)
      const input = newKey(api.id, { name: 'n', ownerId: 'o', meta: { a: [1, { b: 0.1 }] }, environment: 'live' })
      const write = await store.keys.createKey(input)
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
      expect(await store.keys.getKeyById(input.id)).toEqual(write.record)
      expect(await store.keys.getKeyByHash(input.hash)).toEqual(write.record)
      await waitFor(() => events.find((e) => e.keyId === input.id && e.rev === write.event.rev), 'the created event')
      const published = events.find((e) => e.keyId === input.id)!
      // The published event is the write's, stamped with its publish time (unix µs) for the propagation metric.
      const { at, ...rest } = published
      expect(rest).toEqual(write.event)
      expect(Number.isSafeInteger(at)).toBe(true)
      expect(Math.abs(at! - Date.now() * 1000)).toBeLessThan(5_000_000)
    })

    it('refuses a second key with the same hash and writes nothing', async () => {
      const api = await newApi(store)
      const input = newKey(api.id)
      await store.keys.createKey(input)
      const revisionBefore = (await store.changes.readRevisions()).shards[shardOf(input.hash)]
      const twin = { ...input, id: newId('key') }
      expect(await store.keys.createKey(twin)).toBe(false)
      expect((await store.changes.readRevisions()).shards[shardOf(input.hash)]).toEqual(revisionBefore)
      expect(await store.keys.getKeyById(twin.id)).toBeNull()
      expect((await store.keys.listKeys(api.id, { limit: 10 })).keys.map((k) => k.id)).toEqual([input.id])
    })

    it('answers null for unknown keys', async () => {
      expect(await store.keys.getKeyById('key_missing')).toBeNull()
      expect(await store.keys.getKeyByHash(hashKey('no such key'))).toBeNull()
      expect(await store.keys.updateKey('key_missing', { enabled: false }, 1, Date.now())).toBeNull()
      expect(await store.keys.deleteKey('key_missing')).toBeNull()
    })

    it('updates with patch semantics (absent = unchanged, null = cleared) and a higher revision', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id, { name: 'old', ownerId: 'o1', meta: { x: 1 } }))
      if (!created) throw new Error('create failed')
      const write = await store.keys.updateKey(
        created.record.id,
        { name: null, meta: { y: 2 }, enabled: false },
        created.record.rev,
        1234,
      )
      if (!write) throw new Error('update failed')
      expect(write.event.kind).toBe('updated')
      expect(write.event.rev).toBeGreaterThan(created.record.rev)
      const stored = await store.keys.getKeyById(created.record.id)
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
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      await store.keys.updateKey(created.record.id, { name: 'first' }, created.record.rev, Date.now())
      await expect(
        store.keys.updateKey(created.record.id, { name: 'second' }, created.record.rev, Date.now()),
      ).rejects.toBeInstanceOf(WriteConflictError)
      expect((await store.keys.getKeyById(created.record.id))?.name).toBe('first')
    })

    it('lets exactly one of two concurrent updates against the same revision win', async () => {
      const api = await newApi(store)
      for (let round = 0; round < 10; round++) {
        const created = await store.keys.createKey(newKey(api.id))
        if (!created) throw new Error('create failed')
        const outcomes = await Promise.allSettled([
          store.keys.updateKey(created.record.id, { name: 'a' }, created.record.rev, Date.now()),
          store.keys.updateKey(created.record.id, { name: 'b' }, created.record.rev, Date.now()),
        ])
        expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1)
        const lost = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult
        expect(lost.reason).toBeInstanceOf(WriteConflictError)
      }
    })

    it('deletes a key: gone by id, by hash and from its lists, with a deleted event at a new revision', async () => {
      const api = await newApi(store)
      const input = newKey(api.id, { ownerId: 'owner' })
      const created = await store.keys.createKey(input)
      if (!created) throw new Error('create failed')
      const write = await store.keys.deleteKey(input.id)
      expect(write?.event).toMatchObject({ kind: 'deleted', keyId: input.id, hash: input.hash })
      expect(write!.event.rev).toBeGreaterThan(created.event.rev)
      expect(await store.keys.getKeyById(input.id)).toBeNull()
      expect(await store.keys.getKeyByHash(input.hash)).toBeNull()
      expect((await store.keys.listKeys(api.id, { limit: 10 })).keys).toEqual([])
      expect((await store.keys.listKeys(api.id, { limit: 10, ownerId: 'owner' })).keys).toEqual([])
      expect(await store.keys.deleteKey(input.id)).toBeNull()
    })

    it('lists the hash of every stored key, and none of a deleted key or of anything else stored', async () => {
      const api = await newApi(store)
      const kept = await Promise.all(Array.from({ length: 30 }, () => store.keys.createKey(newKey(api.id))))
      const gone = await store.keys.createKey(newKey(api.id))
      await store.keys.deleteKey(gone ? gone.record.id : '')
      // Beside them, records of other kinds in the same shards: an entity, a rate-limit window named like a record.
      await store.entities.writeEntity(entityAddress('role', newId('role')), newId('role'), 'created', { name: 'r' })
      const owner = kept[0] ? kept[0].record.hash : ''
      await store.counters.addRateLimitUsage(
        { group: owner, owner, name: '}:k:not-a-key', duration: 60_000, window: 0 },
        1,
      )
      const hashes = new Set<string>()
      for await (const batch of store.keys.scanKeyHashes()) for (const hash of batch) hashes.add(hash)
      for (const write of kept) expect(hashes.has(write ? write.record.hash : '')).toBe(true)
      expect(hashes.has(gone ? gone.record.hash : '')).toBe(false)
      for (const hash of hashes) expect(await store.keys.getKeyByHash(hash)).not.toBeNull()
    })

    it('spends credits all or nothing, never more than the balance, and answers null for a key that carries none', async () => {
      const api = await newApi(store)
      const now = Date.now()
      const input = newKey(api.id, { remaining: 3 })
      const none = newKey(api.id)
      await store.keys.createKey(input)
      await store.keys.createKey(none)
      expect(await store.keys.spendCredits(input.hash, 2, undefined, now)).toEqual({ ok: true, remaining: 1 })
      // No room for 2 more: nothing spent.
      expect(await store.keys.spendCredits(input.hash, 2, undefined, now)).toEqual({ ok: false, remaining: 1 })
      expect((await store.keys.getKeyByHash(input.hash))?.remaining).toBe(1)
      expect((await store.keys.getKeyById(input.id))?.remaining).toBe(1)
      // Spends at once: exactly as many pass as the balance holds.
      expect(await store.keys.updateCredits(input.id, 'set', 5, undefined, now)).toBe(5)
      const spends = await Promise.all(
        Array.from({ length: 8 }, () => store.keys.spendCredits(input.hash, 1, undefined, now)),
      )
      expect(spends.filter((spend) => spend?.ok)).toHaveLength(5)
      expect((await store.keys.getKeyByHash(input.hash))?.remaining).toBe(0)
      expect(await store.keys.spendCredits(none.hash, 1, undefined, now)).toBeNull()
      expect(await store.keys.spendCredits(hashKey('no such key'), 1, undefined, now)).toBeNull()
    })

    it("changes a key's balance: increment, decrement to no less than 0, set, take, never past MAX_CREDITS", async () => {
      const api = await newApi(store)
      const now = Date.now()
      const input = newKey(api.id, { remaining: 10 })
      await store.keys.createKey(input)
      expect(await store.keys.updateCredits(input.id, 'increment', 5, undefined, now)).toBe(15)
      expect(await store.keys.updateCredits(input.id, 'decrement', 20, undefined, now)).toBe(0)
      expect(await store.keys.updateCredits(input.id, 'set', 7, undefined, now)).toBe(7)
      // `take` empties the balance and answers what it held.
      expect(await store.keys.updateCredits(input.id, 'take', 0, undefined, now)).toBe(7)
      expect((await store.keys.getKeyById(input.id))?.remaining).toBe(0)
      expect(await store.keys.updateCredits(input.id, 'increment', MAX_CREDITS + 1, undefined, now)).toBe(MAX_CREDITS)
      // A key that carries no credits gets none; a key gone, or never there, neither.
      const none = newKey(api.id)
      await store.keys.createKey(none)
      expect(await store.keys.updateCredits(none.id, 'set', 1, undefined, now)).toBeNull()
      expect(await store.keys.getKeyById(none.id)).not.toHaveProperty('remaining')
      await store.keys.deleteKey(input.id)
      expect(await store.keys.updateCredits(input.id, 'set', 1, undefined, now)).toBeNull()
      expect(await store.keys.spendCredits(input.hash, 1, undefined, now)).toBeNull()
      expect(await store.keys.updateCredits('key_missing', 'set', 1, undefined, now)).toBeNull()
    })

    it('refills a balance once per refill that is due, before spending or changing it', async () => {
      const api = await newApi(store)
      const created = Date.now() - 60_000
      const input = newKey(api.id, { remaining: 1, createdAt: created })
      await store.keys.createKey(input)
      // The balance was last set (created) before the boundary: refilled to 5, then spent.
      const refill = { boundary: created + 10, amount: 5 }
      expect(await store.keys.spendCredits(input.hash, 2, refill, created + 20)).toEqual({ ok: true, remaining: 3 })
      // Refilled after that boundary: not again.
      expect(await store.keys.spendCredits(input.hash, 2, refill, created + 30)).toEqual({ ok: true, remaining: 1 })
      // The next boundary: the refill comes first, the change after it.
      expect(
        await store.keys.updateCredits(input.id, 'increment', 1, { ...refill, boundary: created + 40 }, created + 50),
      ).toBe(6)
      // A balance set restarts the refill clock: a boundary before it refills nothing.
      expect(await store.keys.updateCredits(input.id, 'set', 2, undefined, created + 60)).toBe(2)
      expect(await store.keys.spendCredits(input.hash, 1, { ...refill, boundary: created + 55 }, created + 70)).toEqual(
        {
          ok: true,
          remaining: 1,
        },
      )
    })

    it('sets or takes away the balance with the record (updateKey), beside it: a spend then sees it', async () => {
      const api = await newApi(store)
      const now = Date.now()
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const { hash, id } = created.record
      expect(await store.keys.spendCredits(hash, 1, undefined, now)).toBeNull()
      const funded = await store.keys.updateKey(id, { remaining: 4 }, created.record.rev, now)
      expect(funded?.record.remaining).toBe(4)
      expect(await store.keys.spendCredits(hash, 1, undefined, now)).toEqual({ ok: true, remaining: 3 })
      // An update that leaves the balance alone keeps what was spent.
      const renamed = await store.keys.updateKey(id, { name: 'renamed' }, funded!.record.rev, now)
      expect((await store.keys.getKeyByHash(hash))?.remaining).toBe(3)
      await store.keys.updateKey(id, { remaining: null }, renamed!.record.rev, now)
      expect(await store.keys.getKeyByHash(hash)).not.toHaveProperty('remaining')
      expect(await store.keys.spendCredits(hash, 1, undefined, now)).toBeNull()
    })

    it('lists keys sorted by id with cursor paging, a total, and an owner filter', async () => {
      const api = await newApi(store)
      const ids: string[] = []
      for (let i = 0; i < 27; i++) {
        const input = newKey(api.id, { ownerId: i % 3 === 0 ? 'acme' : undefined })
        await store.keys.createKey(input)
        ids.push(input.id)
      }
      ids.sort()
      const seen: string[] = []
      let cursor: string | undefined
      for (let page = 0; page < 10; page++) {
        const result = await store.keys.listKeys(api.id, { cursor, limit: 10 })
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
      const acme = await store.keys.listKeys(api.id, { limit: 100, ownerId: 'acme' })
      // total counts the api, not the owner: Unkey's listKeys answers so.
      expect(acme.keys).toHaveLength(9)
      expect(acme.total).toBe(27)
      expect(acme.keys.every((k) => k.ownerId === 'acme')).toBe(true)

      // Moving a key to another owner moves it between the owner's lists.
      const moved = acme.keys[0]!
      await store.keys.updateKey(moved.id, { ownerId: 'globex' }, moved.rev, Date.now())
      expect((await store.keys.listKeys(api.id, { limit: 100, ownerId: 'acme' })).keys.map((k) => k.id)).not.toContain(
        moved.id,
      )
      expect((await store.keys.listKeys(api.id, { limit: 100, ownerId: 'globex' })).keys.map((k) => k.id)).toEqual([
        moved.id,
      ])
    })
  })
}
