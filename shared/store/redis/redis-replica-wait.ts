import { Cluster, type Redis } from 'ioredis'
import type { ReplicationSettings } from '../../config/settings.js'
import { StoreUnavailableError } from '../../errors/errors.js'
import type { RedisClient } from './redis-connection.js'
import { storeCall } from './redis-store-call.js'

/** What a write that changed something waits for before it is acknowledged (the store's parts share it). */
export type AfterWrite = () => Promise<void>

const settled = () => {}

/**
 * `waitReplicas`: every write waits until that many replicas have it (WAIT) before it is acknowledged, so an
 * acknowledged write survives a failover; if they do not confirm within `timeoutMs` the write answers 503 (it may or
 * may not survive). 0 acknowledges on the primary alone.
 *
 * WAIT counts the writes made on the connection it is sent on, to the replicas of that server. It goes out one at a
 * time on a connection: Redis holds the connection, every request's commands behind it, for as long as a WAIT lasts
 * (up to `timeoutMs` while no replica confirms), and WAITs queued one behind another would hold it for as many times
 * that; a WAIT covers every write made on the connection before it, so the writes answered while one is out share the
 * next.
 *
 * On a Cluster, one management write touches slots on several masters (the record in its shard's, indexes in
 * others), each written on the connection to its master: it waits on every master's connection. Sent through the
 * Cluster itself, WAIT (which names no key) would go to any node and confirm another master's replication.
 */
export function replicaWait(redis: RedisClient, { waitReplicas, timeoutMs }: ReplicationSettings): AfterWrite {
  const waitOn = (connection: Redis | Cluster) =>
    oneAtATime(() => storeCall(() => connection.call('WAIT', waitReplicas, timeoutMs)).then(Number))
  const confirmed = redis instanceof Cluster ? onEveryMaster(redis, waitOn) : waitOn(redis)
  return async () => {
    if (waitReplicas === 0) return
    const count = await confirmed()
    if (count < waitReplicas) {
      throw new StoreUnavailableError(
        `the write reached ${count} of ${waitReplicas} replicas in ${timeoutMs} ms; its outcome is unknown, retry`,
      )
    }
  }
}

/**
 * The fewest replicas any master of `cluster` confirms, each master's WAIT sent by `waitOn` (one per connection). A
 * WAIT that fails may have met a master no longer one (a manual failover leaves the old master connected, a replica
 * now, which refuses WAIT): the Cluster is asked for the slot map again. Only a redirection would make it ask
 * otherwise, and until one, every write would wait on the old master and answer 503.
 */
function onEveryMaster(cluster: Cluster, waitOn: (connection: Redis) => () => Promise<number>): () => Promise<number> {
  const waits = new WeakMap<Redis, () => Promise<number>>()
  const relearn = (err: unknown) => {
    cluster.refreshSlotsCache()
    throw err
  }
  return async () => {
    const masters = cluster.nodes('master')
    // No master known (the Cluster is between slot maps): nothing confirms the write.
    if (masters.length === 0) return 0
    const counts = masters.map((master) => {
      let wait = waits.get(master)
      if (!wait) waits.set(master, (wait = waitOn(master)))
      return wait().catch(relearn)
    })
    return Math.min(...(await Promise.all(counts)))
  }
}

/** `send`, never twice at once: a call made while one is out shares the next one, sent once that is answered. */
function oneAtATime(send: () => Promise<number>): () => Promise<number> {
  let out: Promise<number> | undefined
  let next: Promise<number> | undefined
  const sendNow = () => {
    const sent = send()
    out = sent
    const answered = () => {
      if (out === sent) out = undefined
    }
    sent.then(answered, answered)
    return sent
  }
  return () => {
    if (next) return next
    if (!out) return sendNow()
    next = out.then(settled, settled).then(() => {
      next = undefined
      return sendNow()
    })
    return next
  }
}
