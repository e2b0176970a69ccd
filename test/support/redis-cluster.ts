import { spawnSync } from 'node:child_process'
import { expect } from 'vitest'
import { startRedisServer, type RedisServer } from './redis-server.js'
import { startStrandingProxy, type StrandingProxy } from './stranding-proxy.js'
import { waitFor } from './wait-for.js'

const NODE_ARGS = [
  ...['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
  // Replicas sync at once (Redis 7 waits 5 s for more to come by default).
  ...['--repl-diskless-sync-delay', '0'],
]

/**
 * Starts a node again after a crash (`signal('SIGKILL')`), on its port and from its directory, as an orchestrator
 * restarts a pod: it reads its nodes.conf and rejoins the Cluster (as a replica, if another took over its slots).
 * `announcedPort`: the port it announced (announceClusterAt), which a restart would otherwise forget.
 */
export function restartClusterNode(node: RedisServer, announcedPort?: number): Promise<RedisServer> {
  const announce =
    announcedPort === undefined
      ? []
      : ['--cluster-announce-port', String(announcedPort), '--cluster-announce-bus-port', String(node.port + 10_000)]
  return startRedisServer({ port: node.port, dir: node.dir, args: [...NODE_ARGS, ...announce] })
}

/**
 * A Redis Cluster of three masters (redis-servers on free ports, started side by side), created with redis-cli and
 * settled. `started` is given each node as it starts, so that the caller stops every node that did, whatever else
 * fails (stopAfterAll's `stopped`, or a push onto a list of the caller's). With `replicas`, each master has that many
 * replicas, attached before this returns; the masters come first in the list.
 */
export async function startRedisCluster(
  started: (node: Promise<RedisServer>) => Promise<RedisServer> = (node) => node,
  { replicas = 0 }: { replicas?: number } = {},
): Promise<RedisServer[]> {
  const nodes = await Promise.all(
    Array.from({ length: 3 * (1 + replicas) }, () =>
      started(
        startRedisServer({
          args: NODE_ARGS,
        }),
      ),
    ),
  )
  const created = spawnSync(
    'redis-cli',
    [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ],
    { encoding: 'utf8' },
  )
  expect(created.status, created.stderr + created.stdout).toBe(0)
  await waitForClusterSettled(nodes)
  if (replicas === 0) return nodes
  const roles = await Promise.all(nodes.map(async (node) => (await node.admin.call('ROLE')) as [string, ...unknown[]]))
  const masters = nodes.filter((_, i) => roles[i]![0] === 'master')
  await waitFor(
    async () => {
      for (const master of masters) {
        const info = await master.admin.info('replication')
        if (Number(/connected_slaves:(\d+)/.exec(info)?.[1]) < replicas) return false
        if ((info.match(/state=online/g) ?? []).length < replicas) return false
      }
      return true
    },
    'every replica attached',
    20_000,
    100,
  )
  return [...masters, ...nodes.filter((node) => !masters.includes(node))]
}

/**
 * Waits until every node of a just-created Cluster says cluster_state:ok, not only the first: a node still learning
 * the slot map answers MOVED, and a client's first script call bounced between such nodes is the likely cause of a
 * NOSCRIPT a root-key command met once in CI (ioredis takes a connection to have a script once it sent EVAL on it,
 * even an EVAL redirected before it ran; its one retry can meet that again).
 */
async function waitForClusterSettled(nodes: RedisServer[]): Promise<void> {
  await waitFor(
    async () => {
      for (const node of nodes) {
        if (!((await node.admin.call('CLUSTER', 'INFO')) as string).includes('cluster_state:ok')) return false
      }
      return true
    },
    'every node at cluster_state:ok',
    15_000,
    100,
  )
}

/**
 * Makes every node of a Cluster announce `ports[i]` (a proxy in front of it) instead of its own port, so that clients
 * reach the nodes only through those, redirections and slot maps included; the nodes still talk to each other
 * directly on their bus ports. Waits until every node's slot map names only the announced ports.
 */
export async function announceClusterAt(nodes: RedisServer[], ports: number[]): Promise<void> {
  await Promise.all(
    nodes.map(async (node, i) => {
      await node.admin.call('CONFIG', 'SET', 'cluster-announce-bus-port', String(node.port + 10_000))
      await node.admin.call('CONFIG', 'SET', 'cluster-announce-port', String(ports[i]))
    }),
  )
  const announced = new Set(ports)
  await waitFor(
    async () => {
      for (const node of nodes) {
        const slots = (await node.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
        if (!slots.every(([, , [, port]]) => announced.has(port))) return false
      }
      return true
    },
    'every node to announce its proxy',
    15_000,
    100,
  )
}

/**
 * A Cluster (startRedisCluster, with `replicas`) whose nodes clients reach only through a stranding proxy each, which
 * the nodes announce as their address (announceClusterAt). `register` is given each node and proxy as it starts, to
 * be stopped after the test. `ports` are the proxies' ports, in the order of `nodes`.
 */
export async function startClusterBehindProxies(
  register: (started: { stop(): Promise<unknown> }) => void,
  { replicas = 0 }: { replicas?: number } = {},
): Promise<{ nodes: RedisServer[]; paths: StrandingProxy[]; ports: number[] }> {
  const nodes = await startRedisCluster(
    (starting) =>
      starting.then((node) => {
        register(node)
        return node
      }),
    { replicas },
  )
  const paths = await Promise.all(nodes.map((node) => startStrandingProxy(node.url)))
  for (const path of paths) register(path)
  const ports = paths.map((path) => Number(new URL(path.url).port))
  await announceClusterAt(nodes, ports)
  return { nodes, paths, ports }
}
