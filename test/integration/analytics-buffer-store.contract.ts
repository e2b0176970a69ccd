import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  compareBatchIds,
  type AnalyticsBufferStore,
} from '../../shared/store/analytics-buffer/analytics-buffer-store.js'
import { nothingHappensFor } from '../support/nothing-happens.js'

const BIG = 1_000_000

/**
 * The analytics buffers' contract (shared/store/analytics-buffer/analytics-buffer-store.ts), run on every store. Each
 * test uses buffers of its own: the store is shared by the file's tests.
 */
export function analyticsBufferStoreContract(buffers: () => AnalyticsBufferStore): void {
  describe('analytics buffers', () => {
    it("keeps each recording process's last report until it is forgotten", async () => {
      const store = buffers()
      const [a, b] = [`proc-${randomUUID()}`, `proc-${randomUUID()}`]
      await store.reportThrough(a, 1_000, 1_100)
      await store.reportThrough(b, 2_000, 2_100)
      // A later report replaces the one before, whatever it says.
      await store.reportThrough(a, 900, 1_200)
      let reports = await store.readReports()
      expect(reports.get(a)).toEqual({ through: 900, at: 1_200 })
      expect(reports.get(b)).toEqual({ through: 2_000, at: 2_100 })
      await store.forgetProcesses([a])
      await store.forgetProcesses([])
      reports = await store.readReports()
      expect(reports.has(a)).toBe(false)
      expect(reports.get(b)).toEqual({ through: 2_000, at: 2_100 })
    })

    it('raises a mark, never lowers it', async () => {
      const store = buffers()
      const name = `mark-${randomUUID()}`
      expect(await store.readMark(name)).toBeUndefined()
      await store.raiseMark(name, 1_764_000_000_000)
      await store.raiseMark(name, 1_763_000_000_000)
      expect(await store.readMark(name)).toBe(1_764_000_000_000)
      await store.raiseMark(name, 1_765_000_000_000)
      expect(await store.readMark(name)).toBe(1_765_000_000_000)
    })

    it('holds batches in order, each with its rows, and counts their bytes', async () => {
      const store = buffers()
      expect(await store.append(0, 'first', 3, BIG)).toBe(0)
      expect(await store.append(0, 'second', 5, BIG)).toBe(0)
      const look = await store.look(0, 10)
      expect(look.batches.map(({ batch, rows }) => ({ batch, rows }))).toEqual([
        { batch: 'first', rows: 3 },
        { batch: 'second', rows: 5 },
      ])
      expect(look.bytes).toBe('firstsecond'.length)
      expect(look.pending).toBeUndefined()
      expect(look.trimmedRows).toBe(0)
      // Ids order as the batches were appended.
      expect(compareBatchIds(look.batches[0]!.id, look.batches[1]!.id)).toBeLessThan(0)
      expect((await store.look(0, 1)).batches.map(({ batch }) => batch)).toEqual(['first'])
      // Buffers are apart.
      expect((await store.look(1, 10)).batches).toEqual([])
    })

    it('answers the pending batches until they are completed, then removes them and any before', async () => {
      const store = buffers()
      for (const batch of ['a', 'b', 'c']) await store.append(2, batch, 1, BIG)
      const [a, b] = (await store.look(2, 2)).batches
      await store.take(2, a!.id, b!.id)
      // A batch appended after the take does not join the pending ones.
      await store.append(2, 'd', 1, BIG)
      const again = await store.look(2, 10)
      expect(again.pending).toEqual({ first: a!.id, last: b!.id })
      expect(again.batches.map(({ batch }) => batch)).toEqual(['a', 'b'])
      await store.complete(2, b!.id)
      const after = await store.look(2, 10)
      expect(after.pending).toBeUndefined()
      expect(after.batches.map(({ batch }) => batch)).toEqual(['c', 'd'])
      expect(after.bytes).toBe(2)
    })

    it('trims the oldest batches to stay within its bound, and counts their rows', async () => {
      const store = buffers()
      expect(await store.append(3, 'xxxx', 4, 10)).toBe(0)
      expect(await store.append(3, 'yyyy', 6, 10)).toBe(0)
      // 4 + 4 + 4 > 10: the oldest goes.
      expect(await store.append(3, 'zzzz', 1, 10)).toBe(4)
      const look = await store.look(3, 10)
      expect(look.batches.map(({ batch }) => batch)).toEqual(['yyyy', 'zzzz'])
      expect(look.trimmedRows).toBe(4)
      expect(look.bytes).toBe(8)
      // A batch over the bound by itself is refused, and counted.
      expect(await store.append(3, 'w'.repeat(11), 7, 10)).toBe(7)
      expect((await store.look(3, 10)).trimmedRows).toBe(11)
      expect((await store.look(3, 10)).batches).toHaveLength(2)
    })

    it('holds batches up to its bound exactly', async () => {
      const store = buffers()
      expect(await store.append(6, 'xxxxx', 1, 10)).toBe(0)
      // 5 + 5 = 10: at the bound, not over it.
      expect(await store.append(6, 'yyyyy', 2, 10)).toBe(0)
      expect((await store.look(6, 10)).bytes).toBe(10)
      // A batch of the bound's size is held, alone.
      expect(await store.append(6, 'z'.repeat(10), 4, 10)).toBe(3)
      const look = await store.look(6, 10)
      expect(look.batches.map(({ batch }) => batch)).toEqual(['z'.repeat(10)])
      expect(look).toMatchObject({ bytes: 10, trimmedRows: 3 })
    })

    it('completes pending batches trimmed away meanwhile', async () => {
      const store = buffers()
      await store.append(4, 'aaaa', 1, 8)
      const [a] = (await store.look(4, 1)).batches
      await store.take(4, a!.id, a!.id)
      await store.append(4, 'bbbb', 1, 8)
      await store.append(4, 'cccc', 1, 8)
      const look = await store.look(4, 10)
      expect(look.pending).toEqual({ first: a!.id, last: a!.id })
      expect(look.batches).toEqual([])
      await store.complete(4, a!.id)
      expect((await store.look(4, 10)).batches.map(({ batch }) => batch)).toEqual(['bbbb', 'cccc'])
    })

    it('counts bytes as UTF-8', async () => {
      const store = buffers()
      await store.append(5, 'é€', 1, BIG)
      expect((await store.look(5, 1)).bytes).toBe(Buffer.byteLength('é€'))
    })

    it('gives its lease to one holder at a time, and to another once released or expired', async () => {
      const store = buffers()
      expect(await store.holdLease('contract', 'one', 60_000)).toBe(true)
      expect(await store.holdLease('contract', 'two', 60_000)).toBe(false)
      expect(await store.holdLease('contract', 'one', 60_000)).toBe(true)
      await store.releaseLease('contract', 'two')
      expect(await store.holdLease('contract', 'two', 60_000)).toBe(false)
      await store.releaseLease('contract', 'one')
      expect(await store.holdLease('contract', 'two', 1)).toBe(true)
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(await store.holdLease('contract', 'three', 60_000)).toBe(true)
    })

    it('holds a lease for as long as its holder last asked', async () => {
      const store = buffers()
      expect(await store.holdLease('renewed', 'one', 1)).toBe(true)
      expect(await store.holdLease('renewed', 'one', 60_000)).toBe(true)
      // Past the first ttl: the second one holds.
      await nothingHappensFor(20)
      expect(await store.holdLease('renewed', 'two', 60_000)).toBe(false)
    })
  })
}
