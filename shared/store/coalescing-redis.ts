import { Redis, type Command, type RedisOptions } from 'ioredis'

// ioredis' default reply mapping, the only one Keygate uses: its constructors are typed by it.
type LegacyOptions = RedisOptions & { replyMapping?: 'legacy' }

/**
 * A Redis connection that sends the commands of one turn of the event loop in one write: its socket is corked at
 * the turn's first command and uncorked once the turn's I/O callbacks have run (setImmediate), so that the key reads
 * of a burst of cache misses — and any other commands issued together — cost one system call, not one each.
 *
 * It replaces ioredis' auto-pipelining on one server or behind Sentinel (a Cluster keeps auto-pipelining, which
 * groups by node). Auto-pipelining batched the writes too, but through Pipeline objects of which only one may be in
 * flight at a time: measured on a verifier answering cache misses (bench/RESULTS.md, 2026-11-25), every scavenge
 * promoted ~5.5 MB (≈2.3 KB a miss) and took 7–13 ms, against 0.33 MB and ~2 ms without them; without any batching
 * the writes cost as much as the collector saved. Corking keeps the batching and leaves the commands as they are:
 * each still has its own promise, timeout and reply; only when the bytes leave changes, never their order.
 */
export class CoalescingRedis extends Redis {
  /** The socket corked in this turn, if any: the connection may have been replaced by the time it is uncorked. */
  private corked: Redis['stream'] | undefined

  /** A server at a redis:// or rediss:// URL, or (options alone) behind Sentinel. */
  constructor(target: string | RedisOptions, options: RedisOptions = {}) {
    if (typeof target === 'string') super(target, options as LegacyOptions)
    else super(target as LegacyOptions)
  }

  override sendCommand(command: Command, stream?: Parameters<Redis['sendCommand']>[1]): unknown {
    // Only commands to the live connection (a `stream` argument is ioredis' own, during connect or a pipeline's), and
    // only once it is ready: before that, ioredis queues or refuses commands itself.
    if (this.corked === undefined && stream === undefined && this.status === 'ready') {
      const socket = this.stream
      socket.cork()
      this.corked = socket
      setImmediate(() => {
        this.corked = undefined
        socket.uncork()
      })
    }
    return super.sendCommand(command, stream)
  }
}
