import type { ReplicationSettings } from '../config/settings.js'
import { StoreUnavailableError } from '../errors.js'
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
 * One WAIT at a time: Redis holds the connection, every request's commands behind it, for as long as a WAIT lasts (up
 * to `timeoutMs` while no replica confirms), and WAITs queued one behind another would hold it for as many times that.
 * A WAIT covers every write made on the connection before it, so the writes answered while one is out share the next.
 */
export function replicaWait(redis: RedisClient, { waitReplicas, timeoutMs }: ReplicationSettings): AfterWrite {
  /** The WAIT Redis is holding, if any. */
  let out: Promise<number> | undefined
  /** The WAIT to send once it is answered, for the writes answered meanwhile. */
  let next: Promise<number> | undefined
  const send = (): Promise<number> => {
    const wait = storeCall(() => redis.call('WAIT', waitReplicas, timeoutMs)).then(Number)
    out = wait
    const answered = () => {
      if (out === wait) out = undefined
    }
    wait.then(answered, answered)
    return wait
  }
  const confirmed = (): Promise<number> => {
    if (next) return next
    if (!out) return send()
    next = out.then(settled, settled).then(() => {
      next = undefined
      return send()
    })
    return next
  }
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
