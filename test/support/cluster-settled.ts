import type { RedisServer } from './redis-server.js'
import { waitFor } from './wait-for.js'

/**
 * Waits until every node of a just-created Cluster says cluster_state:ok, not only the first: a node still learning
 * the slot map answers MOVED, and a client's first script call bounced between such nodes is the likely cause of a
 * NOSCRIPT a root-key command met once in CI (ioredis takes a connection to have a script once it sent EVAL on it,
 * even an EVAL redirected before it ran; its one retry can meet that again).
 */
export async function waitForClusterSettled(nodes: RedisServer[]): Promise<void> {
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
