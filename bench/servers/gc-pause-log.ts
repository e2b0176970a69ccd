import { closeSync, openSync, writeSync } from 'node:fs'
import { constants, PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'

/**
 * Loaded into a bench server with `node --import …/gc-pause-log.js` (bench:tail): appends one line per collection
 * V8 reports to perf_hooks to the file BENCH_GC_LOG names — when it began (ms since the epoch), how long it held the
 * thread (ms, wall-clock: a host stall inside it counts), its kind, and the size of V8's new space (both semi-spaces,
 * bytes) when the observer ran, just after the collections it reports — so that a bench can tell which slow requests
 * a pause of the server held, and how V8 had sized the young generation meanwhile. The steps of incremental marking
 * after its start are not reported to perf_hooks, so not here either. One write per collection: a busy server
 * collects a few to a hundred times a second.
 */
const path = process.env.BENCH_GC_LOG
if (path === undefined) throw new Error('gc-pause-log.js needs BENCH_GC_LOG (the file to append to)')
const file = openSync(path, 'a')
process.once('exit', () => closeSync(file))

const KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak',
}

new PerformanceObserver((list) => {
  const young = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0
  for (const entry of list.getEntries()) {
    // Node has put the collection's kind in `detail` since 16; these typings do not say so.
    const kind = KINDS[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? 'other'
    const began = performance.timeOrigin + entry.startTime
    writeSync(file, `${began.toFixed(3)} ${entry.duration.toFixed(3)} ${kind} ${young}\n`)
  }
}).observe({ entryTypes: ['gc'] })
