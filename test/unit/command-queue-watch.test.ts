import { describe, expect, it } from 'vitest'
import {
  CommandQueueWatch,
  SENT_AT,
  type CommandQueue,
  type WatchedCommand,
} from '../../shared/store/redis/command-queue-watch.js'

const TIMEOUT = 100

/** A command sent at `sentAt`, settled by rejecting it (as ioredis' commands are). */
function command(sentAt: number | undefined, settled = false): WatchedCommand & { rejected: Error[] } {
  const rejected: Error[] = []
  const cmd = {
    [SENT_AT]: sentAt,
    isSettled: settled,
    rejected,
    reject(err: Error) {
      rejected.push(err)
      cmd.isSettled = true
    },
  }
  return cmd
}

/** A queue in ioredis' shape (denque's length and peekAt) over an array. */
const queueOf = (commands: WatchedCommand[]): CommandQueue => ({
  get length() {
    return commands.length
  },
  peekAt: (index) => (index < commands.length ? { command: commands[index] } : undefined),
})

/** The queue, counting how many commands a walk reads (`reads`, reset by the test). */
function countingReads(queue: CommandQueue): CommandQueue & { reads: number } {
  return {
    reads: 0,
    get length() {
      return queue.length
    },
    peekAt(index) {
      this.reads++
      return queue.peekAt(index)
    },
  }
}

describe('CommandQueueWatch', () => {
  it('rejects what is due, in order, and says when the next one is due', () => {
    const [a, b, c] = [command(0), command(50), command(120)]
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(queueOf([a, b, c]), 160, TIMEOUT, true)).toBe(220)
    expect(a.rejected.map((err) => err.message)).toEqual(['Command timed out'])
    expect(b.rejected).toHaveLength(1)
    expect(c.rejected).toHaveLength(0)
  })

  it('never rejects a settled command, nor one not due, and says Infinity when nothing waits', () => {
    const settled = command(0, true)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(queueOf([settled]), 1_000, TIMEOUT, true)).toBe(Number.POSITIVE_INFINITY)
    expect(settled.rejected).toHaveLength(0)
    expect(watch.timeOut(queueOf([]), 1_000, TIMEOUT, true)).toBe(Number.POSITIVE_INFINITY)
    const fresh = command(950)
    expect(watch.timeOut(queueOf([fresh]), 1_000, TIMEOUT, true)).toBe(1_050)
    expect(fresh.rejected).toHaveLength(0)
  })

  it('goes on after the settled commands it passed while the queue only grew at its back', () => {
    const commands = [command(0), command(10), command(200)]
    const queue = queueOf(commands)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(queue, 150, TIMEOUT, true)).toBe(300)
    commands.push(command(250))
    expect(watch.timeOut(queue, 310, TIMEOUT, true)).toBe(350)
    expect(commands.map((cmd) => cmd.isSettled)).toEqual([true, true, true, false])
  })

  it('walks from the front again when the queue was replaced, even with the same command in front', () => {
    const front = command(0)
    const watch = new CommandQueueWatch()
    // Two settled commands passed at the front of the first queue.
    expect(watch.timeOut(queueOf([front, command(5)]), 150, TIMEOUT, true)).toBe(Number.POSITIVE_INFINITY)
    // A new queue (a reconnect) with the same front and a due command where the second used to be.
    const due = command(20)
    watch.timeOut(queueOf([front, due]), 150, TIMEOUT, true)
    expect(due.rejected).toHaveLength(1)
  })

  it('walks from the front again while the connection is not ready (commands may leave the middle then)', () => {
    const commands = [command(0), command(5), command(300)]
    const queue = queueOf(commands)
    const watch = new CommandQueueWatch()
    watch.timeOut(queue, 150, TIMEOUT, true)
    // ioredis drops an aborted command from the middle of the same queue as the connection closes.
    commands.splice(1, 1)
    commands.push(command(20))
    expect(commands[1]!.isSettled).toBe(false)
    // The same queue and front, but not ready: the command now second (sent at 300, not due) is seen.
    expect(watch.timeOut(queue, 150, TIMEOUT, false)).toBe(400)
  })

  it('does not walk again the settled commands a hang piles up at the front (a pass costs what is new)', () => {
    const commands = [...Array.from({ length: 1_000 }, () => command(0, true)), command(500)]
    const queue = queueOf(commands)
    const counted = countingReads(queue)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(counted, 550, TIMEOUT, true)).toBe(600)
    expect(counted.reads).toBeGreaterThan(1_000)
    counted.reads = 0
    expect(watch.timeOut(counted, 560, TIMEOUT, true)).toBe(600)
    expect(counted.reads).toBeLessThan(5)
  })

  it('walks from the front again once the commands it passed were answered (the same queue, a new front)', () => {
    const commands = [command(0), command(10), command(200)]
    const queue = queueOf(commands)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(queue, 150, TIMEOUT, true)).toBe(300)
    // Their late replies arrive: both taken off the front; a new command is sent.
    commands.splice(0, 2)
    commands.push(command(260))
    expect(watch.timeOut(queue, 310, TIMEOUT, true)).toBe(360)
    expect(commands.map((cmd) => cmd.isSettled)).toEqual([true, false])
  })

  it('does not walk again the commands it rejected itself, as a hang piles them up', () => {
    const commands = [...Array.from({ length: 1_000 }, () => command(0)), command(500)]
    const queue = queueOf(commands)
    const counted = countingReads(queue)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(counted, 550, TIMEOUT, true)).toBe(600)
    expect(commands.filter((cmd) => cmd.isSettled)).toHaveLength(1_000)
    counted.reads = 0
    expect(watch.timeOut(counted, 560, TIMEOUT, true)).toBe(600)
    expect(counted.reads).toBeLessThan(5)
  })

  it('takes a command due within a millisecond as due (a timer may fire that early)', () => {
    const almost = command(0)
    const watch = new CommandQueueWatch()
    expect(watch.timeOut(queueOf([almost]), TIMEOUT - 0.5, TIMEOUT, true)).toBe(Number.POSITIVE_INFINITY)
    expect(almost.rejected).toHaveLength(1)
  })
})
