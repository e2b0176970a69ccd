import { Redis } from 'ioredis'
import { Agent, request } from 'undici'
import { parseChangeEvent } from '../../shared/change-event.js'
import { specs } from '../../shared/config/config.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { BENCH_ROOT_KEY, onStage } from '../lib/keygate-fixture.js'
import { benchServer, startKeygate, startServer } from '../lib/processes.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { progress } from '../lib/rounds.js'
import { cumulativeCounts, histogramQuantile, percentile } from '../lib/stats.js'

const DISABLES = Number(process.env.BENCH_DISABLES ?? 1_000)
/** The verifier's default poll, as the option table has it: the report names the interval the run had. */
const DEFAULT_POLL_MS = specs.verifier.find((spec) => spec.flag === 'poll-interval')?.default

const PROPAGATION_METRIC = 'keygate_change_propagation_seconds'

/**
 * A verifier's keygate_change_propagation_seconds buckets: bounds (seconds) and cumulative counts, +Inf last (empty
 * before any).
 */
async function propagationBuckets(url: string): Promise<{ bounds: number[]; cumulative: number[] }> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const bounds: number[] = []
  const cumulative: number[] = []
  for (const line of text.split('\n')) {
    const match = /^keygate_change_propagation_seconds_bucket\{[^}]*\ble="([^"]+)"[^}]*\} (\d+)/.exec(line)
    if (!match) continue
    if (match[1] !== '+Inf') bounds.push(Number(match[1]))
    cumulative.push(Number(match[2]))
  }
  // No lines until the first observation (prom-client shows an unlabelled histogram once it has one).
  return { bounds, cumulative }
}

/**
 * 4. Disable → deny. For each of 1,000 keys, cached in two verifiers: send keys.updateKey {enabled:false}, and
 * from that instant poll both verifiers until each denies (the whole path, observed from outside).
 *
 * Judged: publish → applied. The write script stamps each event with Redis' TIME; each verifier observes, in
 * keygate_change_propagation_seconds, how long after that it had applied the change (from then on it denies).
 * The raw pub/sub baseline is a plain subscriber process on the verifiers' core, taking the same events off the
 * same channel and doing the same clock arithmetic and nothing else; its latencies are put through the same
 * buckets, so both p99s are estimated alike. Also reported: a plain subscriber in this process (when the news
 * is out, for the paired whole-path figures) and PUBLISH → message between two connections of this process.
 */
export async function propagation(): Promise<ScenarioReport> {
  return onStage(DISABLES, async ({ fixture, keys, onStop }) => {
    const dispatcher = new Agent({ connections: 4, pipelining: 1 })
    onStop(() => dispatcher.close())
    const verifiers = []
    for (let i = 0; i < 2; i++) {
      const verifier = await startKeygate(['verifier'], fixture.env)
      onStop(() => verifier.stop())
      verifiers.push(verifier)
    }
    /** true or false for a 200's verdict; undefined for anything else (an error is not a deny: ask again). */
    const verify = async (url: string, key: string): Promise<boolean | undefined> => {
      const response = await request(`${url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
        dispatcher,
      })
      const body = (await response.body.json()) as { valid?: boolean }
      return response.statusCode === 200 ? body.valid : undefined
    }
    const listener = await startServer({
      args: [benchServer('change-listener')],
      env: { REDIS_URL: fixture.redis.url },
    })
    onStop(() => listener.stop())
    progress('caching every key in both verifiers')
    for (const { key } of keys)
      for (const v of verifiers) if (!(await verify(v.url, key))) throw new Error('a new key did not verify')

    // The plain subscriber: when each key's change event reaches it.
    const subscriber = new Redis(fixture.redis.url)
    onStop(async () => void subscriber.disconnect())
    const seen = new Map<string, (at: number) => void>()
    subscriber.on('message', (_channel, message) => {
      const at = performance.now()
      const event = parseChangeEvent(message)
      if (event) seen.get(event.keyId)?.(at)
    })
    await subscriber.subscribe(redisKeys.changesChannel)

    const histogramsBefore = await Promise.all(verifiers.map((v) => propagationBuckets(v.url)))
    await fetch(`${listener.url}/reset`, { method: 'POST' })
    const toDeny: number[] = []
    const toEvent: number[] = []
    const toAck: number[] = []
    /** From the moment the plain subscriber had the event to the moment both verifiers denied. */
    const eventToDeny: number[] = []
    progress(`${DISABLES} disables`)
    for (const [i, { keyId, key }] of keys.entries()) {
      const event = new Promise<number>((resolve) => seen.set(keyId, resolve))
      const start = performance.now()
      const write = request(`${fixture.controlPlane.url}/v1/keys.updateKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_ROOT_KEY}` },
        body: JSON.stringify({ keyId, enabled: false }),
        dispatcher,
      }).then(async (response) => {
        if (response.statusCode !== 200) throw new Error(`updateKey: ${response.statusCode}`)
        await response.body.arrayBuffer()
        return performance.now()
      })
      // A write rejects with an Error (undici, or the status check above).
      let failed: Error | undefined
      write.catch((err: Error) => (failed = err))
      const deadline = start + 10_000
      const denied = await Promise.all(
        verifiers.map(async (v) => {
          while ((await verify(v.url, key)) !== false) {
            if (failed !== undefined) throw failed
            if (performance.now() > deadline) throw new Error(`${v.url} still did not deny ${keyId} after 10 s`)
          }
          return performance.now()
        }),
      )
      const eventAt = await event
      toDeny.push(Math.max(...denied) - start)
      toEvent.push(eventAt - start)
      eventToDeny.push(Math.max(...denied) - eventAt)
      toAck.push((await write) - start)
      seen.delete(keyId)
      if ((i + 1) % 200 === 0) progress(`${i + 1}/${DISABLES}`)
    }

    // Publish → applied: both verifiers' histograms over the disables, and the plain listener through the same buckets.
    const histogramsAfter = await Promise.all(verifiers.map((v) => propagationBuckets(v.url)))
    const bounds = histogramsAfter[0]!.bounds
    if (bounds.length === 0) throw new Error(`the verifiers show no ${PROPAGATION_METRIC}`)
    const applied = bounds
      .map((_, i) => i)
      .concat(bounds.length)
      .map((i) =>
        histogramsAfter.reduce((sum, h, v) => sum + h.cumulative[i]! - (histogramsBefore[v]!.cumulative[i] ?? 0), 0),
      )
    const appliedCount = applied[applied.length - 1]!
    if (appliedCount < 2 * DISABLES)
      throw new Error(`the verifiers measured ${appliedCount} events, expected ${2 * DISABLES}`)
    const listened = ((await (await fetch(`${listener.url}/latencies`)).json()) as number[]).map(
      (micros) => micros / 1e6,
    )
    if (listened.length < DISABLES)
      throw new Error(`the plain listener noted ${listened.length} events, expected ${DISABLES}`)
    const listenedBuckets = cumulativeCounts(listened, bounds)
    const estimate = (q: number, cumulative: number[]) => histogramQuantile(q, bounds, cumulative) * 1000

    // Raw pub/sub one-way: PUBLISH from one connection, message on another, timed in this process.
    const publisher = new Redis(fixture.redis.url)
    onStop(async () => void publisher.disconnect())
    const raw: number[] = []
    const rawSubscriber = new Redis(fixture.redis.url)
    onStop(async () => void rawSubscriber.disconnect())
    let received: ((at: number) => void) | undefined
    rawSubscriber.on('message', () => received?.(performance.now()))
    await rawSubscriber.subscribe('bench:raw')
    for (let i = 0; i < DISABLES; i++) {
      const arrived = new Promise<number>((resolve) => (received = resolve))
      const start = performance.now()
      await publisher.publish('bench:raw', 'x'.repeat(200))
      raw.push((await arrived) - start)
    }

    const stats = (values: number[]) => ({
      p50: percentile(values, 50),
      p99: percentile(values, 99),
      max: Math.max(...values),
    })
    const rows: [string, number[]][] = [
      ['updateKey sent → both verifiers deny', toDeny],
      ['updateKey sent → a plain subscriber has the event', toEvent],
      ['updateKey sent → its 200 arrives', toAck],
      ['a plain subscriber has the event → both verifiers deny', eventToDeny],
      ['raw pub/sub one-way (PUBLISH → message)', raw],
    ]
    const ratio = estimate(0.99, applied) / estimate(0.99, listenedBuckets)
    const pairedRatio = stats(toDeny).p99 / stats(toEvent).p99
    const ms = (value: number) => value.toFixed(2)
    const estimated: [string, number[]][] = [
      [`publish → applied in a verifier (${PROPAGATION_METRIC}, both verifiers, ${appliedCount} events)`, applied],
      [
        `publish → a plain subscriber process on the verifiers' core has it (same buckets, ${listened.length} events)`,
        listenedBuckets,
      ],
    ]
    return {
      name: 'propagation',
      title: '4. Propagation: disable → deny',
      command: 'npm run bench:propagation',
      method: `${DISABLES} disables, one at a time, of keys cached in two verifiers (pinned to one core); both polled over keep-alive HTTP from the moment the write is sent. Poll interval ${process.env.POLL_INTERVAL_MS ?? `default (${DEFAULT_POLL_MS} ms)`}: propagation rides on pub/sub, the poll only bounds staleness.`,
      table: {
        headers: ['from → to', 'p50 ms', 'p99 ms', 'max ms'],
        rows: [
          ...estimated.map(([label, cumulative]) => [
            label,
            ms(estimate(0.5, cumulative)),
            ms(estimate(0.99, cumulative)),
            '',
          ]),
          [
            "publish → a plain subscriber process on the verifiers' core has it (exact)",
            ms(stats(listened).p50 * 1000),
            ms(stats(listened).p99 * 1000),
            ms(stats(listened).max * 1000),
          ],
          ...rows.map(([label, values]) => [
            label,
            ms(stats(values).p50),
            ms(stats(values).p99),
            ms(stats(values).max),
          ]),
        ],
      },
      checks: [
        {
          what: 'p99 publish → applied in the verifiers ÷ p99 publish → plain subscriber (raw pub/sub one-way, same events, same core, same buckets)',
          value: ratio,
          target: '≤ 2',
          pass: ratio <= 2,
        },
        {
          what: 'p99 sent → deny ÷ p99 sent → plain subscriber has the same event (the whole path, paired)',
          value: pairedRatio,
          target: '(reported)',
          pass: true,
        },
      ],
      chart: [
        ...estimated.map(([label, cumulative]) => ({
          label,
          p99Ms: {
            median: estimate(0.99, cumulative),
            min: estimate(0.5, cumulative),
            max: estimate(0.99, cumulative),
          },
        })),
        ...rows.map(([label, values]) => ({
          label,
          p99Ms: { median: stats(values).p99, min: stats(values).p50, max: stats(values).max },
        })),
      ],
      notes: [
        "The first two rows are estimated from histogram buckets as PromQL's histogram_quantile does (no max: a histogram keeps none); both go through the same buckets, so the ratio compares like with like. Clocks: Redis and the processes share this host's clock.",
        'In the chart the bar is the p99 and the line runs from p50 to max (one run of 1,000, not rounds).',
        'The rows from "updateKey sent" are the whole path observed from outside: deny is seen by polling, so each includes up to one verify round trip after the verifier applied the change (upper bounds), and the in-process subscriber shares this process\'s event loop with that polling, so its timestamps can run late too.',
      ],
      summary: `propagation: publish → applied p99 ${ms(estimate(0.99, applied))} ms in the verifiers vs ${ms(estimate(0.99, listenedBuckets))} ms to a plain subscriber (${ratio.toFixed(2)}×, target ≤ 2); whole path observed from outside: disable → deny p50 ${ms(stats(toDeny).p50)} / p99 ${ms(stats(toDeny).p99)} / max ${ms(stats(toDeny).max)} ms`,
    }
  })
}
