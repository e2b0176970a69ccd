import { beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import { LOG_TRIMMED } from '../../shared/store/change-log-store.js'
import type { Store } from '../../shared/store/store.js'
import { newApi, newKey } from './contract-records.js'
import type { StoreHarness } from './store.contract.js'

/** The ChangeLogStore contract (change-log-store.ts: `store.changes`), run by the store's contract. */
export function changeLogStoreContract(opened: () => Store, harness: Pick<StoreHarness, 'trimLog'>): void {
  describe('shard revisions and change logs', () => {
    let store: Store
    beforeAll(() => void (store = opened()))

    it('keeps per-shard revisions that only grow and match the last write', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const shard = created.event.shard
      expect((await store.changes.readRevisions()).shards[shard]).toEqual({
        rev: created.event.rev,
        epoch: created.event.epoch,
      })
      const updated = await store.keys.updateKey(created.record.id, { enabled: false }, created.record.rev, Date.now())
      expect(updated!.event.rev).toBe(created.event.rev + 1)
      expect(updated!.event.epoch).toBe(created.event.epoch)
      const revisions = (await store.changes.readRevisions()).shards
      expect(revisions).toHaveLength(64)
      expect(revisions[shard]).toEqual({ rev: updated!.event.rev, epoch: created.event.epoch })
    })

    // The webhooks' key.updated says what changed from this, without keeping copies of records.
    it("keeps the fields an update changed in its log entry, and nothing in a create's or a delete's", async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      const updated = await store.keys.updateKey(
        created.record.id,
        { enabled: false, remaining: 5, name: created.record.name ?? null },
        created.record.rev,
        Date.now(),
      )
      const unchanged = await store.keys.updateKey(created.record.id, { enabled: false }, updated!.record.rev, Date.now())
      const deleted = await store.keys.deleteKey(created.record.id)
      const log = await store.changes.readChanges(created.event.shard, created.event.rev - 1, 100)
      if (log === LOG_TRIMMED) throw new Error('unexpectedly trimmed')
      const entry = (rev: number) => log.find((change) => change.rev === rev)
      expect(entry(created.event.rev)?.fields).toBeUndefined()
      expect(entry(updated!.event.rev)?.fields).toEqual(['enabled', 'remaining'])
      expect(entry(unchanged!.event.rev)?.fields).toBeUndefined()
      expect(entry(deleted!.event.rev)?.fields).toBeUndefined()
      // The event a write returns (and publishes) carries no fields: verifiers never need them.
      expect(updated!.event.fields).toBeUndefined()
    })

    it('replays a shard log after a revision, in order, and says when it was trimmed past it', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id))
      if (!created) throw new Error('create failed')
      let record = created.record
      for (let i = 0; i < 5; i++) {
        const write = await store.keys.updateKey(record.id, { name: `v${i}` }, record.rev, Date.now())
        record = write!.record
      }
      const shard = created.event.shard
      const replay = await store.changes.readChanges(shard, created.event.rev, 100)
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
      expect(await store.changes.readChanges(shard, record.rev, 100)).toEqual([])

      await harness.trimLog(shard, 2)
      expect(await store.changes.readChanges(shard, created.event.rev, 100)).toBe(LOG_TRIMMED)
      const tail = await store.changes.readChanges(shard, record.rev - 2, 100)
      expect(tail).not.toBe(LOG_TRIMMED)
      expect((tail as ChangeEvent[]).map((e) => e.rev)).toEqual([record.rev - 1, record.rev])
    })
  })
}
