import type { Cluster, Redis } from 'ioredis'
import { flushCommandsAwaitingReply } from './stranded-commands.js'

/**
 * Fails, when a Cluster's node connection closes, every command it left awaiting a reply: its outcome is unknown (503,
 * retry), as on one server (coalescing-redis.ts). Left to ioredis, such a command meets the close as "Connection is
 * closed.", which a Cluster answers by sending it again after its failover delay, on the node's next connection or
 * another node — a lone command and an auto-pipelined batch alike. It may have run (only its reply was lost, to a
 * reset, a restarted node, a proxy dropping the connection): a write would run twice, after its caller was told
 * nothing of the first run (a credit spent twice, a usage counted twice, a create answered "exists" after it
 * succeeded). Commands the connection had not sent yet (its offline queue) still go again: they never ran.
 *
 * Node connections are ioredis' own, one per node and never reconnected: each is watched from its `ready` on, its
 * socket's close met before ioredis' own handler sees it.
 */
export function failUnansweredOnClose(cluster: Cluster): void {
  cluster.on('+node', (node: Redis) => {
    node.on('ready', () => {
      node.stream.prependOnceListener('close', () =>
        flushCommandsAwaitingReply(
          node,
          new Error('Connection closed before Redis answered: the command may or may not have run'),
        ),
      )
    })
  })
}
