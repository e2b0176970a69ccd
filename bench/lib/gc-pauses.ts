import { spanLogLines, type Span } from './span.js'

/** One garbage collection of a server, as bench/servers/gc-pause-log.ts wrote it. */
export interface GcPause extends Span {
  kind: 'minor' | 'major' | 'incremental' | 'weak' | 'other'
  /** V8's new space (both semi-spaces) when the observer ran, just after the collections it reported, bytes. */
  youngBytes: number
}

/** The pauses a server's log holds, in the order they happened (a missing log holds none). */
export function readGcPauses(file: string): GcPause[] {
  return spanLogLines(file).map(([began, duration, kind, young]) => ({
    beganEpochMs: Number(began),
    durationMs: Number(duration),
    kind: kind as GcPause['kind'],
    youngBytes: Number(young),
  }))
}

/** The pauses that began within [fromEpochMs, toEpochMs). */
export function pausesBetween(pauses: GcPause[], fromEpochMs: number, toEpochMs: number): GcPause[] {
  return pauses.filter((pause) => pause.beganEpochMs >= fromEpochMs && pause.beganEpochMs < toEpochMs)
}
