import { readFileSync } from 'node:fs'
import { Pool } from 'undici'
import { percentile } from './stats.js'

/**
 * Latency at a modest fixed rate, to the microsecond (autocannon's histogram counts whole milliseconds, too coarse
 * for a 0.5 ms difference): `users` loops, each sending one request, waiting for its answer and then for its next
 * slot (rate ÷ users per second each), over one keep-alive connection apiece. Prints a LoadResult (ms) as JSON.
 */
export interface LatencyPlan {
  url: string
  path: string
  bodies: string[]
  users: number
  rate: number
  durationSeconds: number
}

const plan = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as LatencyPlan
const pool = new Pool(plan.url, { connections: plan.users, pipelining: 1 })
const latencies: number[] = []
let non2xx = 0
let errors = 0
let next = 0
const interval = (1000 * plan.users) / plan.rate
const end = performance.now() + plan.durationSeconds * 1000
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

await Promise.all(
  Array.from({ length: plan.users }, async (_, user) => {
    // Users start spread over one interval, so requests arrive evenly rather than in bursts of `users`.
    let slot = performance.now() + (interval * user) / plan.users
    while (slot < end) {
      const wait = slot - performance.now()
      if (wait > 0) await sleep(wait)
      const start = performance.now()
      try {
        const response = await pool.request({
          method: 'POST',
          path: plan.path,
          headers: { 'content-type': 'application/json' },
          body: plan.bodies[next++ % plan.bodies.length]!,
        })
        await response.body.text()
        if (response.statusCode < 200 || response.statusCode > 299) non2xx++
        latencies.push(performance.now() - start)
      } catch {
        errors++
      }
      slot += interval
    }
  }),
)
await pool.close()
process.stdout.write(
  JSON.stringify({
    rps: latencies.length / plan.durationSeconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: percentile(latencies, 100),
    total: latencies.length,
    non2xx,
    errors,
  }),
)
