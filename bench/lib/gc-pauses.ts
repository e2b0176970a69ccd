import { readFileSync } from 'node:fs'
import type { SlowRequests } from './load.js'

/** One garbage collection of a server, as bench/servers/gc-pause-log.ts wrote it. */
export interface GcPause {
  /** When it began, ms since the epoch. */
  beganEpochMs: number
  durationMs: number
  kind: 'minor' | 'major' | 'incremental' | 'weak' | 'other'
  /** V8's new space (both semi-spaces) just after it, bytes. */
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

/**
 * How many of the slow requests a pause held: written before one ended and answered after it began. A request
 * counted here may have been slowed by something else at the same time too (the host); one not counted was not
 * slowed by a collection of the server at all.
 */
export function heldByPauses(slow: SlowRequests, pauses: GcPause[]): number {
  const ordered = [...pauses].sort((a, b) => a.beganEpochMs - b.beganEpochMs)
  let held = 0
  for (let i = 0; i < slow.sentAtEpochMs.length; i++) {
    const sent = slow.sentAtEpochMs[i]!
    const answered = sent + slow.latencyMs[i]!
    if (ordered.some((pause) => pause.beganEpochMs < answered && pause.beganEpochMs + pause.durationMs > sent)) held++
  }
  return held
}
