import type { ReplicationSettings } from '../config/settings.js'
import { StoreUnavailableError } from '../errors.js'
import type { RedisClient } from './redis-connection.js'
import { storeCall } from './redis-store-call.js'

/** What a write that changed something waits for before it is acknowledged (the store's parts share it). */
export type AfterWrite = () => Promise<void>

/**
 * `waitReplicas`: every write waits until that many replicas have it (WAIT) before it is acknowledged, so an
 * acknowledged write survives a failover; if they do not confirm within `timeoutMs` the write answers 503 (it may or
 * may not survive). 0 acknowledges on the primary alone.
 */
export function replicaWait(redis: RedisClient, { waitReplicas, timeoutMs }: ReplicationSettings): AfterWrite {
  return async () => {
    if (waitReplicas === 0) return
    const confirmed = Number(await storeCall(() => redis.call('WAIT', waitReplicas, timeoutMs)))
    if (confirmed < waitReplicas) {
      throw new StoreUnavailableError(
        `the write reached ${confirmed} of ${waitReplicas} replicas in ${timeoutMs} ms; its outcome is unknown, retry`,
      )
    }
  }
}
