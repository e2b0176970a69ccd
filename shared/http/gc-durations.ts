import { GCProfiler } from 'node:v8'
import { Histogram, type Registry } from 'prom-client'

/**
 * How often the profiler's records are read when nothing scrapes: they pile up in it (~3 KB of JSON a collection,
 * heap statistics before and after), and reading them costs ~25 µs each, so a read of a few seconds' worth would
 * hold the event loop for a millisecond or more (bench/RESULTS.md, 2026-11-26).
 */
const READ_EVERY_MS = 1_000

/** prom-client's own buckets for this histogram (seconds): the series stays what dashboards already read. */
const BUCKETS = [0.001, 0.01, 0.1, 1, 2, 5]

/** V8's collection types as GCProfiler names them, by the `kind` label prom-client gives them. */
const KIND: Record<string, string> = {
  Scavenge: 'minor',
  MinorMarkSweep: 'minor',
  MarkSweepCompact: 'major',
  IncrementalMarking: 'incremental',
  ProcessWeakCallbacks: 'weakcb',
}

export interface GcDurations {
  /** Stops recording (the server is closing). */
  close(): void
}

/**
 * `{prefix}nodejs_gc_duration_seconds`: prom-client's histogram of V8's collections by kind, recorded by
 * `v8.GCProfiler` instead of a perf_hooks observer. Node makes a PerformanceEntry for every collection an observer
 * is told of, with deprecated `kind`/`flags` accessors built afresh on it; measured on Node 20 and 24, that grew the
 * old generation by 6–8.5 KB a collection — 24–100 KB a second in a verifier at 10,000 verifications a second, which
 * brings its major collections (pauses of 6–11 ms) sooner. GCProfiler keeps its records in C++ until they are read:
 * on every scrape, and every READ_EVERY_MS.
 */
export function registerGcDurations(registry: Registry, prefix: string): GcDurations {
  let profiler: GCProfiler | undefined = new GCProfiler()
  profiler.start()
  const histogram = new Histogram({
    name: `${prefix}nodejs_gc_duration_seconds`,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: BUCKETS,
    registers: [registry],
    collect: () => read(),
  })
  const read = (): void => {
    if (profiler === undefined) return
    // The next profiler starts before this one stops: a collection while the records are parsed is the next one's.
    const next = new GCProfiler()
    next.start()
    const { statistics } = profiler.stop()
    profiler = next
    for (const { gcType, cost } of statistics) histogram.observe({ kind: KIND[gcType] ?? 'other' }, cost / 1e6)
  }
  const timer = setInterval(read, READ_EVERY_MS)
  // Recording is no reason for the process to stay.
  timer.unref()
  return {
    close() {
      clearInterval(timer)
      profiler?.stop()
      profiler = undefined
    },
  }
}
