import { beforeAll, describe, expect, it } from 'vitest'
import { entityAddress } from '../../shared/entity.js'
import { newId } from '../../shared/ids.js'
import type { Store } from '../../shared/store/store.js'
import { newApi, newKey } from './contract-records.js'

/** The ChangeSnapshotStore contract (change-snapshot-store.ts: `store.snapshots`), run by the store's contract. */
export function changeSnapshotStoreContract(opened: () => Store): void {
  describe('the records as each change wrote them', () => {
    let store: Store
    beforeAll(() => void (store = opened()))

    it('keeps a key as each write left it, with its balance, and as it was when deleted', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id, { name: 'first', remaining: 10, meta: { plan: 'a' } }))
      if (!created) throw new Error('create failed')
      const { shard } = created.event
      const renamed = await store.keys.updateKey(created.record.id, { name: 'second' }, created.record.rev, Date.now())
      await store.keys.spendCredits(created.record.hash, 3, undefined, Date.now())
      const disabled = await store.keys.updateKey(
        created.record.id,
        { enabled: false },
        renamed!.record.rev,
        Date.now(),
      )
      const deleted = await store.keys.deleteKey(created.record.id)

      const kept = await store.snapshots.readSnapshots(shard, created.event.rev - 1, deleted!.event.rev)
      expect(kept.get(created.event.rev)).toMatchObject({
        doc: { id: created.record.id, name: 'first', enabled: true, meta: { plan: 'a' } },
        credits: 10,
      })
      expect(kept.get(renamed!.event.rev)).toMatchObject({ doc: { name: 'second', enabled: true }, credits: 10 })
      // The balance beside the record, as the write found it: spending is no change of its own.
      expect(kept.get(disabled!.event.rev)).toMatchObject({ doc: { name: 'second', enabled: false }, credits: 7 })
      expect(kept.get(deleted!.event.rev)).toMatchObject({ doc: { name: 'second', enabled: false }, credits: 7 })
      // The balance lives beside the document, never in it.
      expect(kept.get(created.event.rev)!.doc).not.toHaveProperty('remaining')
    })

    it("names the identity a key's externalId names at each write, and none once it is gone", async () => {
      const api = await newApi(store)
      const identityId = newId('id')
      const externalId = `ext-${identityId}`
      const address = entityAddress('identity', externalId)
      await store.entities.writeEntity(address, identityId, 'created', { id: identityId, externalId })
      const created = await store.keys.createKey(newKey(api.id, { ownerId: externalId }))
      if (!created) throw new Error('create failed')
      await store.entities.writeEntity(address, identityId, 'deleted', null)
      const deleted = await store.keys.deleteKey(created.record.id)
      const kept = await store.snapshots.readSnapshots(created.event.shard, created.event.rev - 1, deleted!.event.rev)
      expect(kept.get(created.event.rev)).toMatchObject({ identityId, doc: { ownerId: externalId } })
      expect(kept.get(deleted!.event.rev)).not.toHaveProperty('identityId')
    })

    it('leaves out the balance of a key without credits, and answers only the revisions asked for', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const { shard, rev } = created.event
      const updated = await store.keys.updateKey(created.record.id, { name: 'x' }, created.record.rev, Date.now())
      expect(await store.snapshots.readSnapshots(shard, rev - 1, rev)).toEqual(
        new Map([[rev, { doc: expect.objectContaining({ id: created.record.id }) as unknown }]]),
      )
      expect([...(await store.snapshots.readSnapshots(shard, rev, updated!.event.rev)).keys()]).toEqual([
        updated!.event.rev,
      ])
      expect((await store.snapshots.readSnapshots(shard, updated!.event.rev, updated!.event.rev)).size).toBe(0)
    })

    it('keeps identities and root keys as written and deleted, and nothing of records no event describes', async () => {
      const identityId = newId('id')
      const identity = entityAddress('identity', `ext-${identityId}`)
      const created = await store.entities.writeEntity(identity, identityId, 'created', {
        id: identityId,
        meta: { a: 1 },
      })
      if (typeof created === 'string') throw new Error(created)
      const deleted = await store.entities.writeEntity(identity, identityId, 'deleted', null)
      if (typeof deleted === 'string') throw new Error(deleted)
      const shard = created.event.shard
      const kept = await store.snapshots.readSnapshots(shard, created.rev - 1, deleted.rev)
      expect(kept.get(created.rev)).toEqual({ doc: { id: identityId, meta: { a: 1 } } })
      expect(kept.get(deleted.rev)).toEqual({ doc: { id: identityId, meta: { a: 1 } } })

      const roleId = newId('role')
      const role = await store.entities.writeEntity(entityAddress('role', roleId), roleId, 'created', { id: roleId })
      if (typeof role === 'string') throw new Error(role)
      expect((await store.snapshots.readSnapshots(role.event.shard, role.rev - 1, role.rev)).size).toBe(0)
    })

    it('forgets the snapshots read past, and only those', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const { shard, rev } = created.event
      const updated = await store.keys.updateKey(created.record.id, { name: 'x' }, created.record.rev, Date.now())
      await store.snapshots.forgetSnapshots(shard, rev)
      expect([...(await store.snapshots.readSnapshots(shard, 0, updated!.event.rev)).keys()]).toEqual([
        updated!.event.rev,
      ])
      await store.snapshots.forgetSnapshots(shard, updated!.event.rev)
      expect((await store.snapshots.readSnapshots(shard, 0, updated!.event.rev)).size).toBe(0)
    })
  })
}
