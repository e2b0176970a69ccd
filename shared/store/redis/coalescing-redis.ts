import { Redis, type Command, type RedisOptions } from 'ioredis'
import { CommandQueueWatch, SENT_AT, type CommandQueue, type WatchedCommand } from './command-queue-watch.js'
import { flushCommandsAwaitingReply } from './stranded-commands.js'

// ioredis' default reply mapping, the only one Keygate uses: its constructors are typed by it.
type LegacyOptions = RedisOptions & { replyMapping?: 'legacy' }

/**
 * A Redis connection that sends the commands of one turn of the event loop in one write: its socket is corked at
 * the turn's first command and uncorked once the turn's I/O callbacks have run (setImmediate), so that the key reads
 * of a burst of cache misses — and any other commands issued together — cost one system call, not one each.
 *
 * It is used instead of ioredis' auto-pipelining on one server or behind Sentinel (a Cluster keeps auto-pipelining,
 * which groups by node). Auto-pipelining batches the writes too, but through Pipeline objects of which only one may be
 * in flight at a time: on a verifier answering cache misses the commands waiting behind one live long enough to be
 * promoted, and every scavenge grows longer; without any batching the writes cost as much as the collector would
 * save. Corking keeps the batching and leaves the commands as they are: each still has its own promise and reply;
 * only when the bytes leave changes, never their order.
 *
 * It also times commands out itself (`commandTimeout`, as ioredis names it): a command not answered within it is
 * rejected with ioredis' own "Command timed out", so a hung Redis fails fast. ioredis gives every command a timer of
 * its own and `delete`s it from the command when answered, which turns each command into a slow dictionary object, a
 * cost every cache miss pays. Here one timer per connection watches the commands awaiting a reply — the queue ioredis
 * keeps in sending order — and is due when the oldest of them is. It walks the commands sent (`commandQueue`) and
 * those waiting for a connection (`offlineQueue`). (ioredis' `duplicate()` would make a plain connection from these
 * options, neither coalesced nor timed: open another CoalescingRedis instead — Keygate never duplicates one.)
 *
 * A command a closed connection left unanswered fails at once, and is never sent again: it may have run (only its
 * reply was lost), and ioredis, which sends such commands again on the next connection, would run a write twice — a
 * verification's credits spent twice, an increment applied twice, a create refused as "exists" after it succeeded.
 * Its caller learns that its outcome is unknown (503, retry), as for a timeout.
 *
 * A command that times out on the live connection also ends that connection: a reply missing for that long means the
 * path to Redis is dead (a firewall or NAT that forgot the connection, a Redis whose address vanished) or Redis is
 * stuck, and the kernel reports a dead path only after many minutes. A new connection (ioredis reconnects at once)
 * works as soon as Redis is reachable again, where the old one would wait for ever. A WAIT is the exception: Redis
 * holds its reply, and every command sent after it on the connection, for as long as its own timeout, so its time
 * starts once that has run out (redis-replica-wait.ts sends one at a time, so nothing waits behind two).
 */
export class CoalescingRedis extends Redis {
  /** The socket corked in this turn, if any: the connection may have been replaced by the time it is uncorked. */
  private corked: Redis['stream'] | undefined
  private readonly timeoutMs: number | undefined
  private watchdog: NodeJS.Timeout | undefined
  private readonly awaitingReply = new CommandQueueWatch()
  private readonly offline = new CommandQueueWatch()

  /** A server at a redis:// or rediss:// URL, or (options alone) behind Sentinel. */
  constructor(target: string | RedisOptions, options: RedisOptions = {}) {
    // ioredis must not time commands itself: the watchdog does (see above).
    const { commandTimeout, ...untimed } = typeof target === 'string' ? options : target
    const once = { ...untimed, autoResendUnfulfilledCommands: false } as LegacyOptions
    if (typeof target === 'string') super(target, once)
    else super(once)
    this.timeoutMs = commandTimeout
    // ioredis emits `close` once it has moved the commands the connection left unanswered aside (see above).
    this.on('close', () => this.failUnanswered())
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
    if (this.timeoutMs !== undefined) {
      const watched = command as unknown as WatchedCommand
      // A command sent again after a reconnect keeps its first time, as ioredis' own timer does.
      if (watched[SENT_AT] === undefined) watched[SENT_AT] = performance.now() + heldFor(command)
      if (this.watchdog === undefined) this.armWatchdog(this.timeoutMs)
    }
    return super.sendCommand(command, stream)
  }

  private armWatchdog(inMs: number): void {
    // At least a twentieth of the timeout apart: while Redis hangs, commands fall due one after another, and one pass
    // every so often rejects them all.
    this.watchdog = setTimeout(() => this.timeOut(), Math.max(inMs, this.timeoutMs! / 20, 1))
    // Like the socket, not a reason of its own for the process to stay: a pending command holds the socket open.
    this.watchdog.unref()
  }

  /**
   * Rejects every command awaiting a reply (or waiting offline) that was sent `timeoutMs` ago or more, then sleeps
   * until the oldest one left is due — or until the next command, if none is left.
   */
  private timeOut(): void {
    this.watchdog = undefined
    const now = performance.now()
    // Only on a ready connection are ioredis' queues changed at their ends alone (see CommandQueueWatch).
    const steady = this.status === 'ready'
    const { offlineQueue } = this as unknown as { offlineQueue: CommandQueue }
    const nextDue = Math.min(
      this.awaitingReply.timeOut(this.commandQueue, now, this.timeoutMs!, steady),
      this.offline.timeOut(offlineQueue, now, this.timeoutMs!, steady),
    )
    if (nextDue !== Number.POSITIVE_INFINITY) this.armWatchdog(nextDue - now)
    if (steady && this.awaitingReply.rejected > 0) this.replaceStranded()
  }

  /** Fails what the connection that closed left unanswered (ioredis keeps it aside, to send it again). */
  private failUnanswered(): void {
    const unanswered = (this as unknown as { prevCommandQueue?: { shift(): { command: Command } | undefined } | null })
      .prevCommandQueue
    const error = new Error('Connection closed before Redis answered: the command may or may not have run')
    for (let item = unanswered?.shift(); item !== undefined; item = unanswered?.shift()) item.command.reject(error)
  }

  /**
   * Ends the live connection, which left a command unanswered past its time: ioredis then connects anew (by the
   * retry strategy, asking the sentinels again behind Sentinel). Every command still awaiting a reply on it fails
   * first (stranded-commands.ts says why).
   */
  private replaceStranded(): void {
    this.emit('stranded')
    flushCommandsAwaitingReply(this, new Error('Connection stranded: Redis stopped answering on it'))
    this.stream.destroy()
  }
}

/** How long Redis may hold a command's reply by design, ms: WAIT's own timeout (the only blocking command sent). */
function heldFor(command: Command): number {
  const { name } = command
  return name.length === 4 && name.toLowerCase() === 'wait' ? Number(command.args[1]) || 0 : 0
}
