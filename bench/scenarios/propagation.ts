import { Redis } from 'ioredis'
import { Agent, request } from 'undici'
import { parseChangeEvent } from '../../shared/change-event.js'
import { redisKeys } from '../../shared/store/redis-keys.js'
import { BENCH_ROOT_KEY, onStage } from '../lib/keygate-fixture.js'
import { startKeygate } from '../lib/processes.js'
import type { ScenarioReport } from '../lib/report.js'
import { progress } from '../lib/rounds.js'
import { percentile } from '../lib/stats.js'

const DISABLES = Number(process.env.BENCH_DISABLES ?? 1_000)

/**
 * 4. Disable → deny. For each of 1,000 keys, cached in two verifiers: send keys.updateKey {enabled:false}, and
 * from that instant poll both verifiers until each denies. Paired with it, a plain Redis subscriber on the same
 * channel notes when the very same change event reaches it: that is raw pub/sub's delivery of the news over
 * the same path (control plane, script, PUBLISH). Raw pub/sub one-way latency (PUBLISH → message) is measured
 * in the same run for reference.
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
      const response = await request(`${url}/v1/keys.verifyKey`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ key }), dispatcher })
      const body = (await response.body.json()) as { valid?: boolean }
      return response.statusCode === 200 ? body.valid : undefined
    }
    progress('caching every key in both verifiers')
    for (const { key } of keys) for (const v of verifiers) if (!(await verify(v.url, key))) throw new Error('a new key did not verify')

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
        method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_ROOT_KEY}` }, body: JSON.stringify({ keyId, enabled: false }), dispatcher,
      }).then(async (response) => {
        if (response.statusCode !== 200) throw new Error(`updateKey: ${response.statusCode}`)
        await response.body.arrayBuffer()
        return performance.now()
      })
      let failed: unknown
      write.catch((err: unknown) => (failed = err))
      const deadline = start + 10_000
      const denied = await Promise.all(verifiers.map(async (v) => {
        while ((await verify(v.url, key)) !== false) {
          if (failed !== undefined) throw failed
          if (performance.now() > deadline) throw new Error(`${v.url} still did not deny ${keyId} after 10 s`)
        }
        return performance.now()
      }))
      const eventAt = await event
      toDeny.push(Math.max(...denied) - start)
      toEvent.push(eventAt - start)
      eventToDeny.push(Math.max(...denied) - eventAt)
      toAck.push((await write) - start)
      seen.delete(keyId)
      if ((i + 1) % 200 === 0) progress(`${i + 1}/${DISABLES}`)
    }

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

    const stats = (values: number[]) => ({ p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) })
    const rows: [string, number[]][] = [
      ['updateKey sent → both verifiers deny', toDeny],
      ['updateKey sent → a plain subscriber has the event', toEvent],
      ['updateKey sent → its 200 arrives', toAck],
      ['a plain subscriber has the event → both verifiers deny', eventToDeny],
      ['raw pub/sub one-way (PUBLISH → message)', raw],
    ]
    // publish → deny ≈ one-way delivery + what the verifiers take beyond a plain subscriber; ≤ 2× one-way means
    // that extra must stay within one one-way delivery.
    const ratio = stats(eventToDeny).p99 / stats(raw).p99
    const pairedRatio = stats(toDeny).p99 / stats(toEvent).p99
    const ms = (value: number) => value.toFixed(2)
    return {
      name: 'propagation',
      title: '4. Propagation: disable → deny',
      command: 'npm run bench:propagation',
      method: `${DISABLES} disables, one at a time, of keys cached in two verifiers (pinned to one core); both polled over keep-alive HTTP from the moment the write is sent. Poll interval ${process.env.POLL_INTERVAL_MS ?? 'default (1000 ms)'}: propagation rides on pub/sub, the poll only bounds staleness.`,
      table: { headers: ['from → to', 'p50 ms', 'p99 ms', 'max ms'], rows: rows.map(([label, values]) => [label, ms(stats(values).p50), ms(stats(values).p99), ms(stats(values).max)]) },
      checks: [
        { what: 'p99 of (plain subscriber has the event → both verifiers deny) ÷ p99 raw pub/sub one-way, i.e. publish → deny within 2× one-way', value: ratio, target: '≤ 1', pass: ratio <= 1 },
        { what: 'p99 sent → deny ÷ p99 sent → plain subscriber has the same event (the whole path, paired)', value: pairedRatio, target: '(reported)', pass: true },
      ],
      chart: rows.map(([label, values]) => ({ label, p99Ms: { median: stats(values).p99, min: stats(values).p50, max: stats(values).max } })),
      notes: [
        'In the chart the bar is the p99 and the line runs from p50 to max (one run of 1,000, not rounds).',
        'Deny is observed by polling, so each figure includes up to one verify round trip after the verifier applied the change: the figures are upper bounds. The plain subscriber shares this process\'s event loop with that polling, so its timestamps can run late too.',
      ],
      summary: `propagation: disable → deny p50 ${ms(stats(toDeny).p50)} / p99 ${ms(stats(toDeny).p99)} / max ${ms(stats(toDeny).max)} ms; deny ${ms(stats(eventToDeny).p99)} ms p99 after a plain subscriber had the event (${ratio.toFixed(2)}× raw pub/sub one-way p99 ${ms(stats(raw).p99)} ms)`,
    }
  })
}
