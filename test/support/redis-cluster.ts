import { spawnSync } from 'node:child_process'
import { expect } from 'vitest'
import { startRedisServer, type RedisServer } from './redis-server.js'
import { waitFor } from './wait-for.js'

/**
 * A Redis Cluster of three masters (redis-servers on free ports, started side by side), each with `replicas` replicas,
 * created with redis-cli and settled. `started` is given each node as it starts, so that the caller stops every node
 * that did, whatever else fails (stopAfterAll's `stopped`, or a push onto a list of the caller's).
 */
export async function startRedisCluster(
  started: (node: Promise<RedisServer>) => Promise<RedisServer> = (node) => node,
  replicas = 0,
): Promise<RedisServer[]> {
  const nodes = await Promise.all(
    Array.from({ length: 3 * (1 + replicas) }, () =>
      started(
        startRedisServer({
          args: ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', '2000'],
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
  return nodes
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
