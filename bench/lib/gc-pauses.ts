import { readFileSync } from 'node:fs'
import type { Span } from './span.js'

/** One garbage collection of a server, as bench/servers/gc-pause-log.ts wrote it. */
export interface GcPause extends Span {
  kind: 'minor' | 'major' | 'incremental' | 'weak' | 'other'
  /** V8's new space (both semi-spaces) when the observer ran, just after the collections it reported, bytes. */
  youngBytes: number
}

/** The pauses a server's log holds, in the order they happened (a missing log holds none). */
export function readGcPauses(file: string): GcPause[] {
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
      const [began, duration, kind, young] = line.split(' ')
      return {
        beganEpochMs: Number(began),
        durationMs: Number(duration),
        kind: kind as GcPause['kind'],
        youngBytes: Number(young),
      }
    })
}

/** The pauses that began within [fromEpochMs, toEpochMs). */
export function pausesBetween(pauses: GcPause[], fromEpochMs: number, toEpochMs: number): GcPause[] {
  return pauses.filter((pause) => pause.beganEpochMs >= fromEpochMs && pause.beganEpochMs < toEpochMs)
}
