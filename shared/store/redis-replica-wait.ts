import { Cluster, type Redis } from 'ioredis'
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
 *
 * WAIT speaks for the writes made on the connection it is sent on, and a Cluster keeps a connection per node: one
 * management write touches keys in several slots (the record in its shard's, indexes in others), so on a Cluster it
 * waits on every master's connection. Sent through the Cluster itself, WAIT (which names no key) would go to any
 * node, and confirm another node's replication. A master whose connection wrote nothing since its last WAIT answers
 * at once.
 */
export function replicaWait(redis: RedisClient, { waitReplicas, timeoutMs }: ReplicationSettings): AfterWrite {
  const confirmedOn = async (connection: { call(...args: (string | number)[]): Promise<unknown> }) =>
    Number(await storeCall(() => connection.call('WAIT', waitReplicas, timeoutMs)))
  const confirmedOnEvery = async (masters: Redis[]) => {
    // No master known (the Cluster is between slot maps): nothing confirms the write.
    if (masters.length === 0) return 0
    return Math.min(...(await Promise.all(masters.map(confirmedOn))))
  }
  return async () => {
    if (waitReplicas === 0) return
    const confirmed =
      redis instanceof Cluster ? await confirmedOnEvery(redis.nodes('master')) : await confirmedOn(redis)
    if (confirmed < waitReplicas) {
      throw new StoreUnavailableError(
        `the write reached ${confirmed} of ${waitReplicas} replicas in ${timeoutMs} ms; its outcome is unknown, retry`,
      )
    }
  }
}
