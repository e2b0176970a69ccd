import { readFileSync } from 'node:fs'
import type { Span } from './span.js'

/**
 * The timer callbacks a server's log holds, in the order they ran (bench/servers/timer-callback-log.ts: one line
 * each, when it began in ms since the epoch and how long it held the thread in ms; a missing log holds none).
 */
export function readTimerCallbacks(file: string): Span[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [began, duration] = line.split(' ')
      return { beganEpochMs: Number(began), durationMs: Number(duration) }
    })
}
