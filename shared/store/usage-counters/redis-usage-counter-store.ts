import { Cluster, type Redis } from 'ioredis'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'
import type { CounterMove, CounterPage, HourCounter, UsageCounterStore } from './usage-counter-store.js'

/** Entries SCAN is asked for per call. */
const SCAN_COUNT = 1_000
/** An entry's name: the key's id (its slot), the bucket's size and its start (redis-keys.ts `usage`). */
const ENTRY = /^kg:usage:\{(.+)\}:(hour|day):(\d+)$/

/**
 * The counters on Redis: each a HASH of outcome counts (`success`, `rateLimited`, `usageExceeded`). Pages are SCANs
 * of each master in turn; the cursor says which master and where in it.
 */
export class RedisUsageCounterStore implements UsageCounterStore {
  private readonly nodes: () => Redis[]

  constructor(private readonly redis: RedisClient) {
    this.nodes = () =>
      redis instanceof Cluster ? redis.nodes('master').sort((a, b) => nodeName(a).localeCompare(nodeName(b))) : [redis]
  }

  async readCounters(cursor: string | undefined): Promise<CounterPage> {
    const [at, scanCursor] = cursor === undefined ? [0, '0'] : cursorOf(cursor)
    const nodes = this.nodes()
    const node = nodes[at]
    if (node === undefined) return { counters: [], entries: [], cursor: undefined }
    const [next, found] = await storeCall(() => node.scan(scanCursor, 'MATCH', 'kg:usage:*', 'COUNT', SCAN_COUNT))
    // SCAN may answer an entry more than once: a page holds it once.
    const entries = [...new Set(found)].filter((entry) => ENTRY.test(entry))
    const hours = entries.filter((entry) => ENTRY.exec(entry)![2] === 'hour')
    const counts = await Promise.all(hours.map((entry) => storeCall(() => this.redis.hgetall(entry))))
    const counters: HourCounter[] = hours.map((entry, i) => {
      const [, keyId, , time] = ENTRY.exec(entry)!
      const hash = counts[i] ?? {}
      return {
        keyId: keyId!,
        hour: Number(time),
        valid: Number(hash.success ?? 0),
        rateLimited: Number(hash.rateLimited ?? 0),
        usageExceeded: Number(hash.usageExceeded ?? 0),
      }
    })
    const following = next !== '0' ? `${at}:${next}` : at + 1 < nodes.length ? `${at + 1}:0` : undefined
    return { counters, entries, cursor: following }
  }

  async dropCounters(entries: readonly string[]): Promise<void> {
    // One at a time per entry: on a Cluster each is in its own key's slot.
    await Promise.all(entries.map((entry) => storeCall(() => this.redis.unlink(entry))))
  }

  async pendingMove(): Promise<CounterMove | undefined> {
    const move = await storeCall(() => this.redis.get(redisKeys.usageMove))
    return move === null ? undefined : (JSON.parse(move) as CounterMove)
  }

  async beginMove(move: CounterMove): Promise<void> {
    await storeCall(() => this.redis.set(redisKeys.usageMove, JSON.stringify(move)))
  }

  async endMove(): Promise<void> {
    await storeCall(() => this.redis.unlink(redisKeys.usageMove))
  }
}

const nodeName = (node: Redis) => `${node.options.host ?? ''}:${node.options.port ?? ''}`

function cursorOf(cursor: string): [number, string] {
  const [at, scan] = cursor.split(':')
  return [Number(at), scan ?? '0']
}

/** The entry a key's counter of one hour was kept at: what the contract test writes as verifiers once did. */
export const counterEntry = (keyId: string, hour: number) => redisKeys.usage(keyId, 'hour', hour)
