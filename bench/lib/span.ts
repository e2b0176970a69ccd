import { readFileSync } from 'node:fs'

/** A stretch of time a bench server's thread was held by its own work: a collection, a timer callback. */
export interface Span {
  /** When it began, ms since the epoch. */
  beganEpochMs: number
  durationMs: number
}

/**
 * The lines of a bench server's log of spans (gc-pause-log, timer-callback-log: one a line, when it began and how long
 * it took first, then what the log adds), each as its space-separated fields; a missing log has none.
 */
export function spanLogLines(file: string): string[][] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => line.split(' '))
}
