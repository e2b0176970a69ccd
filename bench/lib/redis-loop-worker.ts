import { readFileSync } from 'node:fs'
import { Redis } from 'ioredis'
import { percentile } from './stats.js'

/**
 * The baseline for a cache miss: `connections` loops each awaiting one HMGET of a key record after another,
 * on one ioredis connection (as the verifier has), for `durationSeconds`. Prints { rps, p50, p99, max } in ms.
 */
interface Plan {
  redisUrl: string
  keys: string[]
  connections: number
  durationSeconds: number
}
const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Plan
const redis = new Redis(plan.redisUrl)
const latencies: number[] = []
const end = performance.now() + plan.durationSeconds * 1000
let next = 0
await Promise.all(
  Array.from({ length: plan.connections }, async () => {
    while (performance.now() < end) {
      const key = plan.keys[next++ % plan.keys.length]!
      const start = performance.now()
      await redis.hmget(key, 'rev', 'doc', 'credits')
      latencies.push(performance.now() - start)
    }
  }),
)
redis.disconnect()
process.stdout.write(
  JSON.stringify({
    rps: latencies.length / plan.durationSeconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    total: latencies.length,
    non2xx: 0,
    errors: 0,
  }),
)
