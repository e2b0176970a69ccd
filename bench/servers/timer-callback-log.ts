import { closeSync, openSync, writeSync } from 'node:fs'

/**
 * Loaded into a bench server with `node --import …/timer-callback-log.js` (bench:tail): appends one line to the file
 * BENCH_TIMER_LOG names for every callback of a global `setTimeout` or `setInterval` that held the thread longer than
 * MIN_MS — when it began (ms since the epoch) and for how long (ms, wall-clock), read back by
 * bench/lib/timer-callbacks.ts — so that a bench can tell which slow requests the server's own timed work held: a
 * verifier's revision polls, usage flushes, rate-limit syncs. What such a callback starts and finishes later (the reply
 * of a Redis command it sent) is not in its span. Timers that do not go through the globals are not seen: Node's
 * internal ones (sockets' timeouts), and those of `node:timers` or `timers/promises` imported by name.
 */
const path = process.env.BENCH_TIMER_LOG
if (path === undefined) throw new Error('timer-callback-log.js needs BENCH_TIMER_LOG (the file to append to)')
const file = openSync(path, 'a')
process.once('exit', () => closeSync(file))

/** Shorter callbacks cannot make a request a millisecond late; leaving them out keeps the log and its cost small. */
const MIN_MS = 0.03

type Callback = (...args: unknown[]) => unknown

function logged(callback: Callback): Callback {
  return function (this: unknown, ...args: unknown[]) {
    const began = performance.now()
    try {
      return callback.apply(this, args)
    } finally {
      const took = performance.now() - began
      if (took > MIN_MS) writeSync(file, `${(performance.timeOrigin + began).toFixed(3)} ${took.toFixed(3)}\n`)
    }
  }
}

/** `setTimeout` or `setInterval` with its callback logged, otherwise the same: Timeout, ref/unref/refresh, clear. */
function wrapping<T extends typeof setTimeout | typeof setInterval>(original: T): T {
  const wrapper = function (this: unknown, callback: unknown, ...rest: unknown[]) {
    return Reflect.apply(original, this, [
      typeof callback === 'function' ? logged(callback as Callback) : callback,
      ...rest,
    ])
  }
  Object.defineProperty(wrapper, 'name', { value: original.name })
  // util.promisify finds its promise form under a symbol (setTimeout[promisify.custom]): kept.
  for (const key of Object.getOwnPropertySymbols(original))
    Object.defineProperty(wrapper, key, Object.getOwnPropertyDescriptor(original, key)!)
  return wrapper as unknown as T
}

globalThis.setTimeout = wrapping(globalThis.setTimeout)
globalThis.setInterval = wrapping(globalThis.setInterval)
