import { readFileSync } from 'node:fs'
import type { LoadResult, SlowRequests } from './load.js'
import { median } from './stats.js'

/** One garbage collection of a server, as bench/servers/gc-pause-log.ts wrote it. */
export interface GcPause {
  /** When it began, ms since the epoch. */
  beganEpochMs: number
  durationMs: number
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

/** Slow requests written less than this apart are one episode: at the bench's rates a queue drains faster. */
export const EPISODE_GAP_MS = 1

/**
 * How many of the slow requests a pause held. The slow requests fall into episodes (runs written less than
 * EPISODE_GAP_MS apart); an episode is held when any of its requests was in flight during a pause — written before
 * the pause ended and answered after it began — and then all its requests count: those written just after the
 * pause waited behind the queue it left. Give it every pause of the server, not only those that began in the window:
 * one that began just before still holds the window's first requests. A held request may have been slowed by
 * something else at the same time too (the host); one not held was slowed by something other than a collection the
 * server reported (the host, the client, the server's own work).
 */
export function heldByPauses(slow: SlowRequests, pauses: GcPause[]): number {
  const order = slow.sentAtEpochMs.map((_, i) => i).sort((a, b) => slow.sentAtEpochMs[a]! - slow.sentAtEpochMs[b]!)
  const inPause = (i: number) => {
    const sent = slow.sentAtEpochMs[i]!
    const answered = sent + slow.latencyMs[i]!
    return pauses.some((pause) => pause.beganEpochMs < answered && pause.beganEpochMs + pause.durationMs > sent)
  }
  let held = 0
  for (let start = 0; start < order.length;) {
    let end = start + 1
    while (
      end < order.length &&
      slow.sentAtEpochMs[order[end]!]! - slow.sentAtEpochMs[order[end - 1]!]! < EPISODE_GAP_MS
    )
      end++
    if (order.slice(start, end).some(inPause)) held += end - start
    start = end
  }
  return held
}

/** One paced window's tail beside the server's collections. */
export interface WindowTail {
  slowPerSecond: number
  /** The share of the slow requests that a collection of the server held (0..1). */
  heldShare: number
  /** Collections that began in the window, per second; the longest of them; their milliseconds per second. */
  pausesPerSecond: number
  longestPauseMs: number
  pauseMsPerSecond: number
  /** V8's new space after the window's collections (the median of what they logged), MiB; NaN without any. */
  youngMb: number
}

/** A paced window (its result must carry the slow requests) beside every pause its server logged. */
export function explainWindow(result: LoadResult, log: GcPause[]): WindowTail {
  const slow = result.slow
  if (slow === undefined) throw new Error('the paced client reported no slow requests: its plan asked for them')
  const seconds = (slow.toEpochMs - slow.fromEpochMs) / 1000
  const inWindow = pausesBetween(log, slow.fromEpochMs, slow.toEpochMs)
  const count = slow.sentAtEpochMs.length
  return {
    slowPerSecond: count / seconds,
    heldShare: count === 0 ? 0 : heldByPauses(slow, log) / count,
    pausesPerSecond: inWindow.length / seconds,
    longestPauseMs: Math.max(0, ...inWindow.map((pause) => pause.durationMs)),
    pauseMsPerSecond: inWindow.reduce((sum, pause) => sum + pause.durationMs, 0) / seconds,
    youngMb: inWindow.length === 0 ? Number.NaN : median(inWindow.map((pause) => pause.youngBytes)) / 2 ** 20,
  }
}
