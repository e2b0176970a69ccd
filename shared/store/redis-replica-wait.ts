import { Cluster } from 'ioredis'
import type { ReplicationSettings } from '../config/settings.js'
import { StoreUnavailableError } from '../errors.js'
import { toStoreError, type RedisClient } from './redis-connection.js'
import { storeCall } from './redis-store-call.js'

/**
 * What a write that changed something waits for before it is acknowledged (the store's parts share it). `key` is a key
 * the write changed: on a Cluster, the replicas to wait for are those of the master that holds it.
 */
export type AfterWrite = (key: string) => Promise<void>

const settled = () => {}

/**
 * `waitReplicas`: every write waits until that many replicas have it (WAIT) before it is acknowledged, so an
 * acknowledged write survives a failover; if they do not confirm within `timeoutMs` the write answers 503 (it may or
 * may not survive). 0 acknowledges on the primary alone.
 *
 * WAIT counts the writes made on the connection it is sent on, to the replicas of that server. On one server (or
 * behind Sentinel) it goes out one at a time: Redis holds the connection, every request's commands behind it, for as
 * long as a WAIT lasts (up to `timeoutMs` while no replica confirms), and WAITs queued one behind another would hold it
 * for as many times that; a WAIT covers every write made on the connection before it, so the writes answered while one
 * is out share the next. On a Cluster, a keyless command would go to any master: each write's WAIT goes in a pipeline
 * with a read of its key, which the client sends to the master holding that key, on the connection the write went on.
 */
export function replicaWait(redis: RedisClient, { waitReplicas, timeoutMs }: ReplicationSettings): AfterWrite {
  const confirmed =
    redis instanceof Cluster
      ? (key: string) => waitBeside(redis, key, waitReplicas, timeoutMs)
      : oneAtATime(() => storeCall(() => redis.call('WAIT', waitReplicas, timeoutMs)).then(Number))
  return async (key) => {
    if (waitReplicas === 0) return
    const count = await confirmed(key)
    if (count < waitReplicas) {
      throw new StoreUnavailableError(
        `the write reached ${count} of ${waitReplicas} replicas in ${timeoutMs} ms; its outcome is unknown, retry`,
      )
    }
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

/** WAIT on the master of a Cluster that holds `key`. */
async function waitBeside(cluster: Cluster, key: string, replicas: number, timeoutMs: number): Promise<number> {
  const replies = await storeCall(() => cluster.pipeline().exists(key).call('WAIT', replicas, timeoutMs).exec())
  const [error, count] = replies?.[1] ?? [new Error('WAIT got no reply')]
  if (error) throw toStoreError(error)
  return Number(count)
}
