import { beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import { LOG_TRIMMED } from '../../shared/store/change-log/change-log-store.js'
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
      expect(await store.changes.readRevision(shard)).toEqual(revisions[shard])
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
      const unchanged = await store.keys.updateKey(
        created.record.id,
        { enabled: false },
        updated!.record.rev,
        Date.now(),
      )
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

    // The webhooks' key.credits.low and key.credits.exhausted come from these.
    it('logs a credit notice when a balance crosses its threshold going down or reaches 0, in the same step', async () => {
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id, { remaining: 5 }))
      if (!created) throw new Error('create failed')
      const { id: keyId, hash } = created.record
      const shard = created.event.shard
      const [before] = [(await store.changes.lastCreditNoticeIds())[shard]!]
      const notice = { keyId, apiId: api.id, lowThreshold: 3 }
      const now = Date.now()
      await store.keys.spendCredits(hash, 1, undefined, now, notice) // 5 → 4: nothing
      await store.keys.spendCredits(hash, 2, undefined, now, notice) // 4 → 2: low
      await store.keys.spendCredits(hash, 1, undefined, now) // 2 → 1, no notice asked for
      await store.keys.updateCredits(keyId, 'increment', 10, undefined, now, notice) // up: nothing
      await store.keys.updateCredits(keyId, 'decrement', 8, undefined, now, notice) // 11 → 3: low
      await store.keys.spendCredits(hash, 3, undefined, now, notice) // 3 → 0: exhausted only (already at the threshold)
      expect(await store.keys.spendCredits(hash, 1, undefined, now, notice)).toEqual({ ok: false, remaining: 0 })
      const read = await store.changes.readCreditNotices(shard, before, 100)
      if (read === LOG_TRIMMED) throw new Error('unexpectedly trimmed')
      const mine = read.filter((entry) => entry.keyId === keyId)
      expect(mine.map(({ id: _id, ...entry }) => entry)).toEqual([
        { kind: 'low', keyId, apiId: api.id, remaining: 2, threshold: 3 },
        { kind: 'low', keyId, apiId: api.id, remaining: 3, threshold: 3 },
        { kind: 'exhausted', keyId, apiId: api.id, remaining: 0 },
      ])
      // Read on from a notice: only what came after it; the last id is where a new reader starts.
      const after = await store.changes.readCreditNotices(shard, mine[0]!.id, 100)
      expect(after === LOG_TRIMMED ? after : after.filter((e) => e.keyId === keyId).map((e) => e.id)).toEqual(
        mine.slice(1).map((entry) => entry.id),
      )
      expect((await store.changes.lastCreditNoticeIds())[shard]).toBe(read.at(-1)!.id)
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
