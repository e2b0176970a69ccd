import { spanLogLines, type Span } from './span.js'

/**
 * The timer callbacks a server's log holds, in the order they ran (bench/servers/timer-callback-log.ts: one line
 * each, when it began in ms since the epoch and how long it held the thread in ms; a missing log holds none).
 */
export function readTimerCallbacks(file: string): Span[] {
  return spanLogLines(file).map(([began, duration]) => ({ beganEpochMs: Number(began), durationMs: Number(duration) }))
}
