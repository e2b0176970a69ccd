import { describe, expect, it } from 'vitest'
import { startFaultLoad } from '../support/fault-load.js'
import { jsonPoster, startKeygate } from '../support/processes.js'
import { restartClusterNode, startRedisCluster } from '../support/redis-cluster.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'cluster-failover-root-key-0123456'
const BOUND_MS = 2_000
/** The promise: ready again within this long of the new master taking over. */
const RECOVERED_WITHIN_MS = 10_000

/**
 * A master of a Cluster (three masters, a replica each) SIGKILLed under load: its replica takes over once the others
 * agree it is gone (cluster-node-timeout, 2 s here). Until then its slots answer nothing: writes answer 503, and the
 * verifier, unable to confirm its cache, holds its answers for a poll sent after them or refuses (503), never
 * answering from a cache older than the bound. After it the verifier is ready again, writes resume once the killed
 * node is back as a replica, and no acknowledged write is missing (each waited for the replicas: REDIS_WAIT_REPLICAS).
 */
describe('Redis Cluster: a master killed under load', () => {
  const stoppable = stopAfterAll()

  it('fails over with no late valid answer, no 500 and no acknowledged write lost', async () => {
    const nodes = await startRedisCluster(stoppable.stopped, { replicas: 1 })
    const masters = nodes.slice(0, 3)
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: masters.map((n) => `127.0.0.1:${n.port}`).join(','),
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
      REDIS_WAIT_REPLICAS: '1',
      REDIS_WAIT_TIMEOUT_MS: '500',
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
    // The load under way before the fault: a second's worth of its writes answered.
    await load.wrote(20)

    const victim = masters[0]!
    const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(await victim.admin.info('replication'))![1])
    const replica = nodes.find((node) => node.port === replicaPort)!
    victim.signal('SIGKILL')
    const killedAt = Date.now()
    await waitFor(
      async () => ((await replica.admin.call('ROLE')) as [string])[0] === 'master',
      'the replica to take over',
      20_000,
      50,
    )
    const promotedAt = Date.now()
    const readyAt = await waitFor(
      async () => ((await fetch(`${verifier.url}/readyz`)).status === 200 ? Date.now() : undefined),
      'the verifier ready again',
      RECOVERED_WITHIN_MS,
      50,
    )
    // The killed node comes back, as its pod would, and rejoins as the new master's replica: until then that master
    // has no replica to confirm writes, and they answer 503 (REDIS_WAIT_REPLICAS trades that for durability).
    stoppable.push(await restartClusterNode(victim))
    const restartedAt = Date.now()
    const post = jsonPoster(ROOT_KEY)
    await waitFor(
      async () => (await post(controlPlane.url, 'apis.createApi', { name: 'after the failover' })).status === 200,
      'a write confirmed by the rejoined replica',
      RECOVERED_WITHIN_MS,
      50,
    )
    const writingAt = Date.now()
    // Load on the new master for a while (a second's worth of writes): writes go there, the verifier serves from it.
    await load.wrote(20)
    const report = await load.stop()
    console.log(
      `cluster failover: replica promoted ${promotedAt - killedAt} ms after the kill, verifier ready ${readyAt - promotedAt} ms after that, writes confirmed ${writingAt - restartedAt} ms after the old master restarted; answers ${JSON.stringify(Object.fromEntries(report.codes))} (slowest ${report.slowestMs} ms), not ready ${report.notReady} samples (${report.longestNotReadyMs} ms in a row), ${report.created.length} creates and ${report.disabled.length} disables acknowledged`,
    )
    // No answer but 200 and 503 ("retry"): not a 500, nor a 4xx, nor a verifier that stopped answering (0).
    expect([...report.statuses.keys()].filter((status) => status !== 200 && status !== 503)).toEqual([])
    expect(report.unexpectedWrites).toEqual([])
    expect(report.lateValid).toBe(0)
    // Every key verified was acknowledged: not found means a node without it answered.
    expect(report.notFound).toEqual([])
    expect(await load.lostWrites()).toEqual([])
    expect(report.statuses.get(200)).toBeGreaterThan(0)
    expect(report.created.length).toBeGreaterThan(0)
    expect(report.disabled.length).toBeGreaterThan(0)
  }, 120_000)
})
