import { describe, expect, it } from 'vitest'
import { BUCKET_MS, bucketStart } from '../../shared/analytics.js'
import { newId } from '../../shared/ids.js'
import type { UsageStore } from '../../shared/store/usage/usage-store.js'

/** The UsageStore contract (usage-store.ts: `store.usage`), run by the store's contract. */
export function usageStoreContract(usage: () => UsageStore): void {
  describe('verification counts', () => {
    it('adds counts to their buckets and reads back, oldest first, only the buckets that have counts', async () => {
      const keyId = newId('key')
      const hour = bucketStart('hour', Date.now()) - 3 * BUCKET_MS.hour
      const later = hour + 2 * BUCKET_MS.hour
      await usage().addUsage([
        { keyId, granularity: 'hour', time: later, counts: { success: 2, usageExceeded: 1 } },
        { keyId, granularity: 'hour', time: hour, counts: { success: 1, rateLimited: undefined } },
        { keyId, granularity: 'day', time: bucketStart('day', hour), counts: { rateLimited: 4 } },
      ])
      await usage().addUsage([{ keyId, granularity: 'hour', time: hour, counts: { rateLimited: 1 } }])
      expect(await usage().readUsage(keyId, 'hour', hour + 1, later + BUCKET_MS.hour)).toEqual([
        { time: hour, success: 1, rateLimited: 1, usageExceeded: 0 },
        { time: later, success: 2, rateLimited: 0, usageExceeded: 1 },
      ])
      expect(await usage().readUsage(keyId, 'day', hour, hour)).toEqual([
        { time: bucketStart('day', hour), success: 0, rateLimited: 4, usageExceeded: 0 },
      ])
      expect(await usage().readUsage(newId('key'), 'hour', hour, later)).toEqual([])
    })
  })
}
