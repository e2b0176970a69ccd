import { describe, expect, it } from 'vitest'
import { startFaultLoad } from '../support/fault-load.js'
import { startKeygate } from '../support/processes.js'
import { redisCli } from '../support/redis-cli.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'reshard-test-root-key-0123456789'
const BOUND_MS = 2_000

/**
 * A third of the slots moved by `redis-cli --cluster reshard` while verifications, disables and creates run: MOVED and
 * ASK meet the processes mid-migration. No verification answers 500 (a redirection is retried, or a 503 at worst), no
 * disabled key verifies past the bound, every acknowledged create is there afterwards, and the verifier stays ready
 * but for a blip.
 */
describe('Redis Cluster: a reshard under load', () => {
  const stoppable = stopAfterAll()

  it('costs no 500, no late valid answer, no acknowledged write', async () => {
    const nodes = await startRedisCluster(stoppable.stopped)
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
    }
    const [controlPlane, verifier] = await Promise.all([
      stoppable.stopped(startKeygate(['control-plane'], env)),
      stoppable.stopped(startKeygate(['verifier'], env)),
    ])
    const load = await startFaultLoad({
      controlPlane: controlPlane.url,
      verifier: verifier.url,
      rootKey: ROOT_KEY,
      boundMs: BOUND_MS,
    })

    const ids = await Promise.all(
      nodes.map(async (node) => ((await node.admin.call('CLUSTER', 'MYID')) as string).trim()),
    )
    const started = Date.now()
    const reshard = await redisCli([
      '--cluster',
      'reshard',
      `127.0.0.1:${nodes[0]!.port}`,
      '--cluster-from',
      ids[0]!,
      '--cluster-to',
      ids[1]!,
      '--cluster-slots',
      '5461',
      '--cluster-yes',
    ])
    expect(reshard.code, reshard.output.slice(-2_000)).toBe(0)
    console.log(`reshard: 5461 slots moved in ${Date.now() - started} ms under load`)
    // A little load after the move too (a second's worth of writes): the clients learn the new owners.
    await load.wrote(20)
    const report = await load.stop()

    console.log(
      `reshard: answers ${JSON.stringify(Object.fromEntries(report.statuses))}, not ready ${report.notReady} samples (${report.longestNotReadyMs} ms in a row)`,
    )
    // No answer but 200 and 503 ("retry"): not a 500, nor a 4xx, nor a verifier that stopped answering (0).
    expect([...report.statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([])
    expect(report.unexpectedWrites).toEqual([])
    expect(report.lateValid).toBe(0)
    // Every key verified was acknowledged: not found means a node without it answered.
    expect(report.notFound).toEqual([])
    // At most a blip of readiness: never out of its Service for the bound's length (polls failing for over 2 s made
    // /readyz flap). Not-ready samples themselves vary with the machine's load, so it is the longest run that is held.
    expect(report.longestNotReadyMs).toBeLessThan(BOUND_MS)
    await waitFor(async () => (await fetch(`${verifier.url}/readyz`)).status === 200, 'the verifier ready', 5_000)
    expect(await load.lostWrites()).toEqual([])
    expect(report.created.length).toBeGreaterThan(0)
  }, 120_000)
})
