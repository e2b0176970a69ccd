import { LRUCache } from 'lru-cache'
import { bucketTimes, type Bucket, type Granularity, type Outcome, type UsageIncrement } from '../../analytics.js'
import type { UsageStore } from './usage-store.js'

/** Verification counts in process memory; bounded, so that a long-running dev process keeps the recent buckets. */
export class MemoryUsageStore implements UsageStore {
  private readonly buckets = new LRUCache<string, Bucket>({ max: 1_000_000 })

  async addUsage(increments: Iterable<UsageIncrement>): Promise<void> {
    for (const inc of increments) {
      const id = `${inc.keyId} ${inc.granularity} ${inc.time}`
      const bucket = this.buckets.get(id) ?? { time: inc.time, success: 0, rateLimited: 0, usageExceeded: 0 }
      for (const [field, n] of Object.entries(inc.counts)) bucket[field as Outcome] += n ?? 0
      this.buckets.set(id, bucket)
    }
  }

  async readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]> {
    const buckets: Bucket[] = []
    for (const t of bucketTimes(granularity, from, to)) {
      const bucket = this.buckets.get(`${keyId} ${granularity} ${t}`)
      if (bucket) buckets.push({ ...bucket })
    }
    return buckets
  }
}
