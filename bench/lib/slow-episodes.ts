// A paced window's slow requests in episodes, and what held each: the server's collections (gc-pauses.ts), its timer
// callbacks (timer-callbacks.ts), or neither (bench:tail).
import { pausesBetween, type GcPause } from './gc-pauses.js'
import type { LoadResult, SlowRequests } from './load.js'
import type { Span } from './span.js'
import { median } from './stats.js'

/** Slow requests written less than this apart are one episode: at the bench's rates a queue drains faster. */
export const EPISODE_GAP_MS = 1

/**
 * An episode of at least this many slow requests is a long one: at bench:tail's 10,000 req/s, 2 ms of arrivals left
 * unanswered at once. A stall of the core for a few milliseconds makes one, whatever took the core: the host (a VM's
 * guest kernel has periodic work of its own), one of the server's own collections or timers, which their logs tell
 * apart, and anything else that takes the core for milliseconds, which they do not: V8's helper threads, Redis on the
 * same core, the server's own work outside a logged callback's first turn.
 */
export const LONG_EPISODE = 20

/** The slow requests as episodes: each the indices of its requests in the order they were written. */
export function episodesOf(slow: SlowRequests): number[][] {
  const order = slow.sentAtEpochMs.map((_, i) => i).sort((a, b) => slow.sentAtEpochMs[a]! - slow.sentAtEpochMs[b]!)
  const episodes: number[][] = []
  for (let start = 0; start < order.length;) {
    let end = start + 1
    while (
      end < order.length &&
      slow.sentAtEpochMs[order[end]!]! - slow.sentAtEpochMs[order[end - 1]!]! < EPISODE_GAP_MS
    )
      end++
    episodes.push(order.slice(start, end))
    start = end
  }
  return episodes
}

/**
 * Whether a request of the episode was in flight during a span — written before it ended, answered after it began —
 * and so the whole episode held by it: those written just after the span waited behind the queue it left. Give it
 * every span of the server, not only those that began in the window: one that began just before still holds the
 * window's first requests. Held means overlapped, not caused: a held request may have been slowed by something else
 * at the same time too (a host stall, after which a timer due meanwhile runs at once and a scavenge is likely), so
 * the shares held are upper bounds on what the logged spans cost; and what neither held includes the server's own
 * work no log covers (what a timer leaves for a later turn, setImmediate callbacks, replies).
 */
function heldBy(slow: SlowRequests, episode: number[], spans: Span[]): boolean {
  return episode.some((i) => {
    const sent = slow.sentAtEpochMs[i]!
    const answered = sent + slow.latencyMs[i]!
    return spans.some((span) => span.beganEpochMs < answered && span.beganEpochMs + span.durationMs > sent)
  })
}

/** One paced window's tail beside the server's collections and timer callbacks. */
export interface WindowTail {
  slowPerSecond: number
  /** The share of the slow requests that a collection of the server held (0..1). */
  gcShare: number
  /** The share that a timer callback of the server held and no collection did (0..1). */
  timerShare: number
  /** The share in long episodes (LONG_EPISODE) that neither held: stalls the logs do not see (0..1). */
  longUnheldShare: number
  /** Collections that began in the window, per second; the longest of them; their milliseconds per second. */
  pausesPerSecond: number
  longestPauseMs: number
  pauseMsPerSecond: number
  /** V8's new space after the window's collections (the median of what they logged), MiB; NaN without any. */
  youngMb: number
}

/** A paced window (its result must carry the slow requests) beside the spans its server logged. */
export function explainWindow(result: LoadResult, pauses: GcPause[], timers: Span[]): WindowTail {
  const slow = result.slow
  if (slow === undefined) throw new Error('the paced client reported no slow requests: its plan asked for them')
  const seconds = (slow.toEpochMs - slow.fromEpochMs) / 1000
  const inWindow = pausesBetween(pauses, slow.fromEpochMs, slow.toEpochMs)
  const count = slow.sentAtEpochMs.length
  let held = 0
  let byTimer = 0
  let longUnheld = 0
  for (const episode of episodesOf(slow)) {
    if (heldBy(slow, episode, pauses)) held += episode.length
    else if (heldBy(slow, episode, timers)) byTimer += episode.length
    else if (episode.length >= LONG_EPISODE) longUnheld += episode.length
  }
  const share = (n: number) => (count === 0 ? 0 : n / count)
  return {
    slowPerSecond: count / seconds,
    gcShare: share(held),
    timerShare: share(byTimer),
    longUnheldShare: share(longUnheld),
    pausesPerSecond: inWindow.length / seconds,
    longestPauseMs: Math.max(0, ...inWindow.map((pause) => pause.durationMs)),
    pauseMsPerSecond: inWindow.reduce((sum, pause) => sum + pause.durationMs, 0) / seconds,
    youngMb: inWindow.length === 0 ? Number.NaN : median(inWindow.map((pause) => pause.youngBytes)) / 2 ** 20,
  }
}
