import type { LeakReportStore } from './leak-report-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'

/** Claims of leak reports on Redis: one expiring STRING each (SET NX PX), which Redis itself forgets. */
export class RedisLeakReportStore implements LeakReportStore {
  constructor(private readonly redis: RedisClient) {}

  async claimReport(digest: string, ttlMs: number): Promise<boolean> {
    const set = await storeCall(() => this.redis.set(redisKeys.leakReport(digest), '1', 'PX', ttlMs, 'NX'))
    return set === 'OK'
  }

  async keepReport(digest: string, ttlMs: number): Promise<void> {
    await storeCall(() => this.redis.set(redisKeys.leakReport(digest), '1', 'PX', ttlMs))
  }

  async releaseReport(digest: string): Promise<void> {
    await storeCall(() => this.redis.del(redisKeys.leakReport(digest)))
  }
}
