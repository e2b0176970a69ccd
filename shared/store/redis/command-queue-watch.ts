/**
 * A command as the watchdog sees it: when its time started (performance.now() when it was first sent, later for a
 * command Redis holds by design), and whether it has settled.
 */
export interface WatchedCommand {
  [SENT_AT]?: number
  isSettled: boolean
  reject(err: Error): void
}

/** A queue of commands as ioredis keeps them (denque): only read here, never changed. */
export interface CommandQueue {
  readonly length: number
  peekAt(index: number): { command: unknown } | undefined
}

const TIMER_SLACK_MS = 1

/** Where a command keeps when its time started (set by CoalescingRedis). */
export const SENT_AT = Symbol('sent at')

/**
 * One of ioredis' queues of commands, as the watchdog walks it. Commands are appended at the back and taken from the
 * front, and a command the watchdog rejected stays queued until its reply comes (ioredis' own timeout leaves it so
 * too): while Redis hangs, those pile up at the front, and walking them on every pass would cost more the longer it
 * hangs. So the walk remembers how many settled commands it passed at the front, and starts after them next time —
 * only while nothing but the two ends of the queue can have changed: the same queue object, the same command at its
 * front, and a ready connection (when a connection closes, ioredis removes commands from the middle of its queues
 * and then replaces them).
 */
export class CommandQueueWatch {
  private passedQueue: CommandQueue | undefined
  private passedFront: unknown
  private passed = 0
  /** How many commands the last timeOut rejected. */
  rejected = 0

  /** Rejects what is due; returns when the next command left is due (Infinity: none is waiting). */
  timeOut(queue: CommandQueue, now: number, timeoutMs: number, steady: boolean): number {
    const front = queue.peekAt(0)?.command
    const resume = steady && queue === this.passedQueue && front !== undefined && front === this.passedFront
    let i = resume ? this.passed : 0
    let settledUpTo = i
    this.rejected = 0
    for (; i < queue.length; i++) {
      const command = queue.peekAt(i)?.command as WatchedCommand | undefined
      const sentAt = command?.[SENT_AT]
      if (command === undefined || sentAt === undefined || command.isSettled) {
        if (settledUpTo === i) settledUpTo++
        continue
      }
      const due = sentAt + timeoutMs
      // A timer may fire up to a millisecond before performance.now() says it is due: such a command is due now,
      // rather than a whole watchdog step later.
      if (due > now + TIMER_SLACK_MS) {
        this.remember(queue, front, settledUpTo)
        // Sent in order: the commands after this one are due later still (a re-sent one excepted, which waits for
        // this one's turn at most; those behind a WAIT are held by Redis as long as it is, and wait for it too).
        return due
      }
      command.reject(new Error('Command timed out'))
      this.rejected++
      if (settledUpTo === i) settledUpTo++
    }
    this.remember(queue, front, settledUpTo)
    return Number.POSITIVE_INFINITY
  }

  private remember(queue: CommandQueue, front: unknown, passed: number): void {
    this.passedQueue = passed > 0 ? queue : undefined
    this.passedFront = passed > 0 ? front : undefined
    this.passed = passed
  }
}
