import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { Cluster, type Redis } from 'ioredis'
import {
  ANALYTICS_RETENTION_MS,
  bucketTimes,
  type Bucket,
  type Granularity,
  type Outcome,
  type UsageIncrement,
} from '../../analytics.js'
import { toStoreError, type RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { ADD_USAGE_SCRIPT } from '../redis/redis-scripts.js'
import { storeCall } from '../redis/redis-store-call.js'
import type { UsageStore } from './usage-store.js'

interface UsageScripts {
  addUsage(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>
}

// Buckets (a key's hour and day: two per key) whose usage one script call adds on a single Redis, a few commands each
// inside the script: enough to save round trips, few enough that one call holds Redis only briefly.
const USAGE_BUCKETS_PER_CALL = 50
// A flush's calls in flight at once, on one Redis and on a Cluster. Sent all at once, a large flush would hold Redis in
// one stretch: every other client of it (a miss path, another verifier) would wait that long, and a verifier sharing a
// core with Redis would stall with it. One at a time, Redis serves others between calls; the flush takes a round trip
// a call longer, off every request's path. A Cluster's calls are a key's two buckets each, spread over its nodes: 32 at
// once keep a flush of 50,000 keys near a second.
const USAGE_CALLS_IN_FLIGHT = 1
const CLUSTER_USAGE_CALLS_IN_FLIGHT = 32
// Buckets encoded in one turn of the event loop before it is let go (a Cluster call is smaller than this).
const USAGE_BUCKETS_PER_TURN = 200

/** One addUsage script call: its buckets (the script's keys) and, per bucket, its outcome counts. */
interface UsageCall {
  /** Its first bucket's key id (on a Cluster, every bucket's: they share its slot). */
  keyId: string
  buckets: string[]
  args: (string | number)[]
}

/** Verification counts on Redis: each bucket a HASH of outcome counts in its key id's slot (redis-keys.ts `usage`). */
export class RedisUsageStore implements UsageStore {
  private readonly redis: Redis & UsageScripts
  private readonly cluster: Cluster | undefined

  constructor(redis: RedisClient) {
    // Called with the number of keys first: one call adds several buckets.
    redis.defineCommand('addUsage', { lua: ADD_USAGE_SCRIPT })
    this.redis = redis as unknown as Redis & UsageScripts
    this.cluster = redis instanceof Cluster ? redis : undefined
  }

  async addUsage(increments: Iterable<UsageIncrement>): Promise<void> {
    // On a Cluster a call's buckets must share a slot: a call per key (its buckets are in its id's slot), ended where
    // the next increment is another key's. On one Redis any buckets go together, USAGE_BUCKETS_PER_CALL to a call (not
    // a call per key verified, which a busy verifier's flush would make thousands of). Arguments are pushed straight
    // into each call's lists: a flush covers every key verified in the last seconds, and its garbage is paid for in the
    // verifier's collector.
    //
    // Increments are read only when there is room in the window to send the call they go to (one call in flight on one
    // Redis, CLUSTER_USAGE_CALLS_IN_FLIGHT on a Cluster): the verifier's recorder takes a key's counts when they are
    // read, so none waits for a call of its own. The event loop is let go every USAGE_BUCKETS_PER_TURN buckets besides
    // (on one Redis each call's wait for its reply already does): a verifier flushing thousands of keys in one turn
    // would hold every verification behind it for milliseconds, which shows in the p99.
    // After a failed call nothing more is sent (Redis is likely down: a call after another would each wait out the
    // command timeout) nor read, and the flush fails once the calls in flight settled: increments read into a call not
    // sent are dropped with it — none on one Redis; on a Cluster, the buckets of the key being read (at most its two).
    const window = this.cluster === undefined ? USAGE_CALLS_IN_FLIGHT : CLUSTER_USAGE_CALLS_IN_FLIGHT
    const inFlight = new Set<Promise<void>>()
    let failure: unknown
    const send = (call: UsageCall): void => {
      let reply: Promise<unknown>
      try {
        reply = this.redis.addUsage(call.buckets.length, ...call.buckets, ...call.args)
      } catch (err) {
        // Thrown rather than rejected: mapped like any other failure, once the calls already sent are settled.
        failure ??= err
        return
      }
      const settled: Promise<void> = reply.then(
        () => void inFlight.delete(settled),
        (err: unknown) => {
          failure ??= err
          inFlight.delete(settled)
        },
      )
      inFlight.add(settled)
    }
    let call: UsageCall | undefined
    let inTurn = 0
    const reading = increments[Symbol.iterator]()
    try {
      for (;;) {
        // Room before the next read. On one Redis only a call's first increment waits (its others fit in it); on a
        // Cluster any may be the first of the next key's call, which only reading it shows.
        if (inFlight.size >= window && (call === undefined || this.cluster !== undefined)) {
          // Waiting for a reply is itself a turn let go: other work runs until it comes.
          inTurn = 0
          while (inFlight.size >= window && failure === undefined) await Promise.race(inFlight)
        }
        // Checked before the next is read: an increment read after a failure would be taken only to be dropped.
        if (failure !== undefined) break
        const next = reading.next()
        if (next.done === true) break
        const inc = next.value
        if (this.cluster !== undefined && call !== undefined && call.keyId !== inc.keyId) {
          // Another key: the call so far is complete, and there is room for it (made before this read).
          send(call)
          call = undefined
        }
        call ??= { keyId: inc.keyId, buckets: [], args: [ANALYTICS_RETENTION_MS] }
        call.buckets.push(redisKeys.usage(inc.keyId, inc.granularity, inc.time))
        const at = call.args.push(0) - 1
        let outcomes = 0
        for (const outcome in inc.counts) {
          call.args.push(outcome, inc.counts[outcome as Outcome] ?? 0)
          outcomes++
        }
        call.args[at] = outcomes
        if (this.cluster === undefined && call.buckets.length === USAGE_BUCKETS_PER_CALL) {
          send(call)
          call = undefined
        }
        if (++inTurn === USAGE_BUCKETS_PER_TURN) {
          inTurn = 0
          await yieldToEventLoop()
        }
      }
    } finally {
      // Read no further: an iterable that holds something until it is read to the end (a generator's finally) lets go.
      reading.return?.()
    }
    if (call !== undefined && failure === undefined) {
      // The last call: room for it, as for any other, before it is sent.
      while (inFlight.size >= window && failure === undefined) await Promise.race(inFlight)
      if (failure === undefined) send(call)
    }
    await Promise.all(inFlight)
    if (failure !== undefined) throw toStoreError(failure)
  }

  async readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]> {
    const times = bucketTimes(granularity, from, to)
    const rows = await storeCall(() =>
      Promise.all(times.map((t) => this.redis.hgetall(redisKeys.usage(keyId, granularity, t)))),
    )
    return times.flatMap((time, i) => {
      const row = rows[i]!
      if (Object.keys(row).length === 0) return []
      return [
        {
          time,
          success: Number(row.success ?? 0),
          rateLimited: Number(row.rateLimited ?? 0),
          usageExceeded: Number(row.usageExceeded ?? 0),
        },
      ]
    })
  }
}
