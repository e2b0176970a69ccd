import type { Cluster, Redis } from 'ioredis'
import { flushCommandsAwaitingReply } from './stranded-commands.js'

/** How often each of a Cluster's connections is asked PING, ms. */
const HEARTBEAT_MS = 1_000

/**
 * Replaces a Cluster's node connections that stopped answering, as CoalescingRedis does for one server's: a path that
 * died without a reset (a firewall or NAT that forgot it, a node whose address vanished) would otherwise get no answer
 * until the kernel gives the socket up, many minutes later, while a new connection would work at once.
 *
 * ioredis keeps one connection per node and never replaces one on its own: it times each command out and leaves the
 * connection as it is. Nor does anything ask the Cluster's subscriber connection, which only listens. So every live
 * connection — the nodes' and the subscriber's — is asked PING every second; one that leaves it unanswered for
 * `timeoutMs` is ended. Its commands still awaiting a reply fail first and leave its queue: ended with them, ioredis
 * would send each again on another node ("Connection is closed" is one it retries), a write that may have run sent
 * twice. An ended node leaves ioredis' pool; the Cluster connects to it anew at its next command for one of its slots
 * (or, with no node left, from its seed nodes), and a new subscriber is chosen and subscribes again.
 *
 * Returns a function that stops the watch (the Cluster's `end` stops it too).
 */
export function watchClusterNodes(cluster: Cluster, timeoutMs: number): () => void {
  const asked = new WeakSet<Redis>()
  const ask = (node: Redis | null | undefined) => {
    if (!node || node.status !== 'ready' || asked.has(node)) return
    asked.add(node)
    const unanswered = setTimeout(() => {
      if (node.status !== 'ready') return
      cluster.emit('stranded')
      flushCommandsAwaitingReply(node, new Error('Connection stranded: the Redis node stopped answering on it'))
      // disconnect() alone would only half-close the socket, which waits for the other end's answer for as long as
      // the path is dead: destroying it ends the connection now.
      node.disconnect()
      node.stream.destroy()
    }, timeoutMs)
    unanswered.unref()
    const answered = () => {
      clearTimeout(unanswered)
      asked.delete(node)
    }
    node.ping().then(answered, answered)
  }
  const heartbeat = setInterval(() => {
    for (const node of cluster.nodes('all')) ask(node)
    ask(subscriberOf(cluster))
  }, HEARTBEAT_MS).unref()
  const stop = () => clearInterval(heartbeat)
  cluster.once('end', stop)
  return stop
}

/** The connection a Cluster subscribes on (ioredis' own, not in its typings), if it has one now. */
function subscriberOf(cluster: Cluster): Redis | null | undefined {
  return (cluster as unknown as { subscriber?: { getInstance(): Redis | null } }).subscriber?.getInstance()
}
