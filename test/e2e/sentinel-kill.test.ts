import { describe, expect, it } from 'vitest'
import { startFaultLoad } from '../support/fault-load.js'
import { jsonPoster } from '../support/processes.js'
import { startRedisServer } from '../support/redis-server.js'
import { REPLICATION_ARGS, SENTINEL_BOUND_MS, startSentinelStack, waitForPromotion } from '../support/sentinel-stack.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'sentinel-kill-root-key-0123456789'
/** The promise: the verifier ready again within this long of the promotion. */
const READY_WITHIN_MS = 10_000
/** Writes are acknowledged again within this long of the kill (the sentinels take 2–4 s of it to promote). */
const WRITES_WITHIN_MS = 10_000

/**
 * The primary SIGKILLed while verifications, disables and creates run: the sentinels promote the replica and Keygate
 * follows. No verification answers valid more than the bound after its disable was acknowledged, no answer is an error
 * other than 503, every acknowledged create and disable is on the new master, writes resume within 10 s of the kill and
 * the verifier is ready again within 10 s of the promotion.
 */
describe('Redis Sentinel: the primary SIGKILLed under load', () => {
  const stoppable = stopAfterAll()

  it('answers no valid past the bound, loses no acknowledged write, and is ready again soon after the promotion', async () => {
    const stack = await startSentinelStack(stoppable.stopped, ROOT_KEY, { LOG_LEVEL: 'error' })
    const { controlPlane, verifier } = stack
    // A disable and a create every 100 ms. A write answering 503 has an unknown outcome: only acknowledged ones are
    // held to anything.
    const load = await startFaultLoad(
      { controlPlane: controlPlane.url, verifier: verifier.url, rootKey: ROOT_KEY, boundMs: SENTINEL_BOUND_MS },
      { keys: 40, verifyLoops: 4, disableEvery: 2 },
    )

    // Mid-load: keys disabled (and cached as such) before the kill too.
    await waitFor(() => load.report.disabled.length >= 5, 'disables before the kill', 5_000, 20)
    const { master, replica } = stack
    let killedAt: number
    let promotedAt: number
    let resumedAt: number
    try {
      // SIGKILL, and from its exit on no write can reach it.
      await master.stop()
      killedAt = Date.now()
      promotedAt = await waitForPromotion(stack)
      // The dead server comes back as a supervisor restarts it, as a replica of the master the sentinels name (what
      // the usual charts' start scripts do; the sentinels would otherwise demote it 8 s after it reports in). Until a
      // replica attaches to the new master no write is acknowledged (REDIS_WAIT_REPLICAS).
      await stoppable.stopped(
        startRedisServer({
          port: master.port,
          args: [...REPLICATION_ARGS, '--replicaof', '127.0.0.1', String(replica.port)],
        }),
      )
      resumedAt = await waitFor(
        () => load.firstAcknowledgedAfter(killedAt),
        'a write sent after the kill to be acknowledged',
        WRITES_WITHIN_MS,
        20,
      )
      // Not thrown here: a verifier that does not follow is judged below, with what it answered meanwhile.
      await waitFor(
        () => load.readyAfter(resumedAt),
        'the verifier ready after the failover',
        READY_WITHIN_MS,
        20,
      ).catch(() => {})
      // Load for a bound's length more: every disable acknowledged so far has its bound run out under verifications,
      // as a verification sent once the bound is out shows.
      const boundOut = Date.now() + SENTINEL_BOUND_MS
      await waitFor(() => load.verifiedAfter(boundOut), 'a verification sent once the bound ran out', 30_000, 20)
    } finally {
      await load.stop()
    }
    const report = load.report

    const readyAgainMs = load.readyAgainAfter(promotedAt)
    console.log(
      `sentinel SIGKILL: promoted ${promotedAt - killedAt} ms after the kill; writes resumed ${resumedAt - killedAt} ms ` +
        `after the kill (${resumedAt - promotedAt} after the promotion); verifier ready again ${readyAgainMs} ms ` +
        `after the promotion (${report.notReady} not-ready samples); latest valid answer ` +
        `${report.latestValidMs ?? 'none'} ms after its disable (bound ${SENTINEL_BOUND_MS}); verify answers ` +
        `${JSON.stringify(Object.fromEntries(report.codes))}; writes ${JSON.stringify(Object.fromEntries(report.writes))}; ` +
        `acknowledged ${report.created.length} creates, ${report.disabled.length} disables`,
    )
    expect([...report.statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([])
    expect(report.unexpectedWrites).toEqual([])
    expect(report.latestValidMs ?? 0).toBeLessThanOrEqual(SENTINEL_BOUND_MS)
    expect(report.notFound).toEqual([])
    expect(readyAgainMs).toBeLessThan(READY_WITHIN_MS)
    // Every acknowledged write is on the new master, the keys made before the load with them.
    expect(await load.lostWrites()).toEqual([])
    // The verifier follows: a key made now, on the new master, verifies.
    const post = jsonPoster(ROOT_KEY)
    const fresh = await waitFor(
      async () => {
        const made = await post(controlPlane.url, 'keys.createKey', { apiId: load.apiId })
        return made.status === 200 ? (made.body as { key: string }) : undefined
      },
      'a key made after the load',
      5_000,
      50,
    )
    expect((await post(verifier.url, 'keys.verifyKey', { key: fresh.key }, false)).body.valid).toBe(true)
  }, 60_000)
})
