import type { Redis } from 'ioredis'

/**
 * Fails every command awaiting a reply on `redis`'s live connection with `error`, and takes it off ioredis' queue —
 * for a connection about to be ended because Redis stopped answering on it. Left queued, the commands would meet the
 * connection's end with "Connection is closed", which ioredis answers by sending them again (on the new connection of
 * one server, on another node of a Cluster): a write that may have run, sent twice after its caller was told it failed.
 * The commands not yet sent (the offline queue) stay: sending those later is safe.
 */
export function flushCommandsAwaitingReply(redis: Redis, error: Error): void {
  const { flushQueue } = redis as unknown as {
    flushQueue: (error: Error, options: { offlineQueue: boolean; commandQueue: boolean }) => void
  }
  flushQueue.call(redis, error, { offlineQueue: false, commandQueue: true })
}
