import { expect, it } from 'vitest'
import { startFaultLoad, type FaultLoadReport } from '../test/support/fault-load.js'
import { jsonPoster, startKeygate, type KeygateProcess } from '../test/support/processes.js'
import { redisCli } from '../test/support/redis-cli.js'
import { restartClusterNode, startClusterBehindProxies } from '../test/support/redis-cluster.js'
import { startRedisServer, type RedisServer } from '../test/support/redis-server.js'
import { REPLICATION_ARGS, SENTINEL_NAME, startSentinelStack } from '../test/support/sentinel-stack.js'
import { stopAfterAll } from '../test/support/stop-after-all.js'
import { startStrandingProxy } from '../test/support/stranding-proxy.js'
import { waitFor } from '../test/support/wait-for.js'

/**
 * The chaos soak (CHAOS_SECONDS, default 600): the faults of the fault tests, cycled under load (fault-load.ts) for a
 * third of the time each on one server, behind Sentinel and on a Cluster. After every fault the verifier must be
 * ready and the control plane writing again within 10 s; over each third, no valid answer past the bound, no error
 * but 503, and every acknowledged write read back.
 */
const SECONDS = Number(process.env.CHAOS_SECONDS ?? 600)
const BOUND_MS = 2_000
const RECOVERED_WITHIN_MS = 10_000
/** Load between two faults, so that each starts from a settled system. */
const CALM_MS = 3_000
const ROOT_KEY = 'chaos-soak-root-key-0123456789ab'
const stoppable = stopAfterAll()
const post = jsonPoster(ROOT_KEY)
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One fault: inflicted, and over (healed or worked around, as an operator or orchestrator would) when it returns. */
interface Fault {
  name: string
  inflict(): Promise<void>
}

/** Per fault: how often it ran, and the longest the processes took to serve again after it was over. */
type Recoveries = Map<string, { runs: number; worstMs: number }>

/**
 * Cycles `faults` against a control plane and a verifier under load until `phaseMs` has passed, then holds the
 * phase's promises.
 */
async function soak(
  topology: string,
  processes: { controlPlane: KeygateProcess; verifier: KeygateProcess },
  faults: Fault[],
  phaseMs: number,
): Promise<Recoveries> {
  const end = Date.now() + phaseMs
  const load = await startFaultLoad({
    controlPlane: processes.controlPlane.url,
    verifier: processes.verifier.url,
    rootKey: ROOT_KEY,
    boundMs: BOUND_MS,
  })
  const recoveries: Recoveries = new Map()
  let report: FaultLoadReport | undefined
  try {
    for (let i = 0; Date.now() < end; i++) {
      const fault = faults[i % faults.length]!
      await fault.inflict()
      const overAt = Date.now()
      // Ready, and writing: what failed last is kept for the message when it takes too long.
      let last = ''
      await waitFor(
        async () => {
          const ready = await fetch(`${processes.verifier.url}/readyz`)
          if (ready.status !== 200) return void (last = `verifier /readyz ${ready.status} ${await ready.text()}`)
          const written = await post(processes.controlPlane.url, 'apis.createApi', { name: 'after a fault' })
          if (written.status !== 200) return void (last = `write ${written.status} ${JSON.stringify(written.body)}`)
          return true
        },
        `${topology}: serving again after ${fault.name}`,
        RECOVERED_WITHIN_MS,
        50,
      ).catch((err: Error) => {
        throw new Error(`${err.message}; last: ${last}`)
      })
      const seen = recoveries.get(fault.name) ?? { runs: 0, worstMs: 0 }
      recoveries.set(fault.name, { runs: seen.runs + 1, worstMs: Math.max(seen.worstMs, Date.now() - overAt) })
      await pause(CALM_MS)
    }
  } finally {
    report = await load.stop()
    // A failure's cause is in the processes' error logs: the first few, beside the assertion.
    for (const process of [processes.controlPlane, processes.verifier]) {
      const errors = process
        .output()
        .split('\n')
        .filter((line) => line.includes('"level":50'))
      if (errors.length > 0)
        console.log(`${topology}: ${errors.length} errors logged, the first:\n${errors.slice(0, 3).join('\n')}`)
    }
  }
  const lost = await load.lostWrites()
  console.log(
    `chaos soak, ${topology}: ${JSON.stringify(Object.fromEntries(recoveries))}; answers ${JSON.stringify(Object.fromEntries(report.codes))}; ${report.created.length} creates and ${report.disabled.length} disables acknowledged, ${lost.length} lost; ${report.lateValid} valid past the bound`,
  )
  expect([...report.statuses.keys()].filter((status) => status >= 500 && status !== 503)).toEqual([])
  expect(report.unexpectedWrites).toEqual([])
  expect(report.lateValid).toBe(0)
  expect(lost).toEqual([])
  expect(report.disabled.length).toBeGreaterThan(0)
  return recoveries
}

const env = {
  KEYGATE_ROOT_KEY: ROOT_KEY,
  LOG_LEVEL: 'error',
  MAX_STALENESS_MS: String(BOUND_MS),
  POLL_INTERVAL_MS: '250',
}

const phaseMs = (SECONDS * 1000) / 3

// One server, each process behind a path of its own: stranded connections and a black hole that resumes.
it(`one server: strands and black holes for ${SECONDS / 3} s`, async () => {
  const redis = await stoppable.stopped(startRedisServer())
  const [verifierPath, controlPlanePath] = await Promise.all([
    stoppable.stopped(startStrandingProxy(redis.url)),
    stoppable.stopped(startStrandingProxy(redis.url)),
  ])
  const [controlPlane, verifier] = await Promise.all([
    stoppable.stopped(startKeygate(['control-plane'], { ...env, REDIS_URL: controlPlanePath.url })),
    stoppable.stopped(startKeygate(['verifier'], { ...env, REDIS_URL: verifierPath.url })),
  ])
  await soak(
    'one server',
    { controlPlane, verifier },
    [
      { name: 'verifier stranded', inflict: async () => verifierPath.strand() },
      { name: 'control plane stranded', inflict: async () => controlPlanePath.strand() },
      {
        name: 'black hole of 8 s',
        inflict: async () => {
          verifierPath.blackhole()
          await pause(8_000)
          verifierPath.resume()
        },
      },
    ],
    phaseMs,
  )
}, 3_600_000)

// Sentinel: a forced failover and a SIGKILLed primary, the roles swapping each time.
it(`Sentinel: failovers for ${SECONDS / 3} s`, async () => {
  const stack = await startSentinelStack(stoppable.stopped, ROOT_KEY, { LOG_LEVEL: 'error' })
  let primary: RedisServer = stack.master
  let standby: RedisServer = stack.replica
  const promoted = async (server: RedisServer) => {
    await waitFor(
      async () => {
        const named = (await stack.sentinels[0]!.client.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_NAME)) as [
          string,
          string,
        ]
        return Number(named[1]) === server.port
      },
      'the sentinels to promote the standby',
      30_000,
      50,
    )
    ;[primary, standby] = [server, primary]
  }
  await soak(
    'Sentinel',
    stack,
    [
      {
        name: 'SENTINEL FAILOVER',
        inflict: async () => {
          await stack.sentinels[0]!.client.call('SENTINEL', 'FAILOVER', SENTINEL_NAME)
          await promoted(standby)
          // Over once the sentinels have made the old primary a replica of the new one, at their next look at it
          // (every 10 s): until then no replica confirms a write (REDIS_WAIT_REPLICAS).
          await waitFor(
            async () => {
              const role = await redisCli(['-p', String(standby.port), 'ROLE'])
              return role.output.startsWith('slave') && role.output.includes('connected')
            },
            'the sentinels to make the old primary a replica',
            30_000,
            100,
          )
        },
      },
      {
        name: 'primary SIGKILLed',
        inflict: async () => {
          await primary.stop()
          await promoted(standby)
          // Restarted as its supervisor would, as a replica of the master the sentinels name.
          standby = await stoppable.stopped(
            startRedisServer({
              port: standby.port,
              args: [...REPLICATION_ARGS, '--replicaof', '127.0.0.1', String(primary.port)],
            }),
          )
        },
      },
    ],
    phaseMs,
  )
}, 3_600_000)

// A Cluster of three masters with a replica each, every node behind a path of its own: reshards, a master SIGKILLed
// (and restarted, rejoining as a replica), Keygate's paths stranded.
it(`Cluster: reshards, failovers and strands for ${SECONDS / 3} s`, async () => {
  const behindProxies = await startClusterBehindProxies((started) => stoppable.push(started), { replicas: 1 })
  const { paths, ports } = behindProxies
  let nodes = behindProxies.nodes
  const clusterEnv = {
    ...env,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_CLUSTER_NODES: ports.map((port) => `127.0.0.1:${port}`).join(','),
    REDIS_WAIT_REPLICAS: '1',
    REDIS_WAIT_TIMEOUT_MS: '500',
  }
  const [clusterControlPlane, clusterVerifier] = await Promise.all([
    stoppable.stopped(startKeygate(['control-plane'], clusterEnv)),
    stoppable.stopped(startKeygate(['verifier'], clusterEnv)),
  ])
  /** The masters that hold slots now, by node id, as a live node sees them. */
  const masters = async () => {
    const live = nodes.find((node) => node.admin.status === 'ready')!
    const table = (await live.admin.call('CLUSTER', 'NODES')) as string
    return table
      .trim()
      .split('\n')
      .map((line) => line.split(' '))
      .filter((fields) => fields[2]!.includes('master') && !fields[2]!.includes('fail') && fields.length > 8)
      .map((fields) => ({ id: fields[0]!, port: Number(/:(\d+)@/.exec(fields[1]!)![1]) }))
  }
  await soak(
    'Cluster',
    { controlPlane: clusterControlPlane, verifier: clusterVerifier },
    [
      {
        name: 'reshard of 1000 slots',
        inflict: async () => {
          const [from, to] = await masters()
          const moved = await redisCli([
            ...['--cluster', 'reshard', `127.0.0.1:${from!.port}`],
            ...['--cluster-from', from!.id, '--cluster-to', to!.id, '--cluster-slots', '1000', '--cluster-yes'],
          ])
          expect(moved.code, moved.output.slice(-2_000)).toBe(0)
        },
      },
      {
        name: 'master SIGKILLed',
        inflict: async () => {
          const [first] = await masters()
          const index = ports.indexOf(first!.port)
          const victim = nodes[index]!
          const info = await victim.admin.info('replication')
          const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(info)![1])
          const replica = nodes[ports.indexOf(replicaPort)] ?? nodes.find((node) => node.port === replicaPort)!
          // Only a replica in sync may take over (a node restarted by the last kill may still be loading its copy).
          await waitFor(
            async () => {
              const state = await replica.admin.info('replication')
              return state.includes('master_link_status:up') && state.includes('master_sync_in_progress:0')
            },
            'the replica to be in sync before the kill',
            30_000,
            100,
          )
          victim.signal('SIGKILL')
          await waitFor(
            async () => ((await replica.admin.call('ROLE')) as [string])[0] === 'master',
            'the replica to take over',
            30_000,
            50,
          )
          const restarted = await stoppable.stopped(restartClusterNode(victim, ports[index]))
          nodes = nodes.map((node) => (node === victim ? restarted : node))
        },
      },
      {
        name: "every path of Keygate's stranded",
        inflict: async () => {
          // Keygate's connections only (they carry its name): the nodes replicate through these paths too, and a
          // stranded replication link is Redis' to notice (repl-timeout, 60 s), not Keygate's.
          for (const path of paths) path.strand('keygate')
        },
      },
    ],
    phaseMs,
  )
}, 3_600_000)
