import { Counter, Registry } from 'prom-client'
import eventLoopLag from 'prom-client/lib/metrics/eventLoopLag.js'
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js'
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js'
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js'
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js'
import processHandles from 'prom-client/lib/metrics/processHandles.js'
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js'
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js'
import processRequests from 'prom-client/lib/metrics/processRequests.js'
import processResources from 'prom-client/lib/metrics/processResources.js'
import processStartTime from 'prom-client/lib/metrics/processStartTime.js'
import version from 'prom-client/lib/metrics/version.js'
import { registerGcDurations } from './gc-durations.js'
import { RouteMetrics } from './route-metrics.js'
import { redisErrorCounts } from '../store/redis-connection.js'

const PREFIX = 'keygate_'

/**
 * prom-client's default metrics (collectDefaultMetrics) but its GC histogram, which gc-durations.ts records instead:
 * the same series. test/integration/ops-metrics.test.ts holds this list to prom-client's own.
 */
const DEFAULT_METRICS = [
  processCpuTotal,
  processStartTime,
  osMemoryHeap,
  processOpenFileDescriptors,
  processMaxFileDescriptors,
  eventLoopLag,
  processResources,
  processHandles,
  processRequests,
  heapSizeAndUsed,
  heapSpacesSizeAndUsed,
  version,
]

/** Latency buckets, seconds: from a cached verdict (~100 µs) to a slow Redis round trip. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]

export interface HttpMetrics {
  registry: Registry
  /** keygate_http_requests_total and keygate_http_request_duration_seconds, by route. */
  routes: RouteMetrics
  /** Stops what records in the background (the GC profiler): the server is closing. */
  close(): void
}

/** One registry per server (not prom-client's global), so several servers can live in one process. */
export function createMetricsRegistry(service: string): HttpMetrics {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  // prom-client's default resolution of the event-loop delay monitor (ms).
  for (const register of DEFAULT_METRICS) register(registry, { prefix: PREFIX, eventLoopMonitoringPrecision: 10 })
  const gcDurations = registerGcDurations(registry, PREFIX)
  new Counter({
    name: 'keygate_redis_errors_total',
    help: 'Redis connection errors (refused, reset, timed out) in this process, by connection',
    labelNames: ['connection'],
    registers: [registry],
    collect() {
      this.reset()
      for (const [connection, count] of redisErrorCounts()) this.inc({ connection }, count)
    },
  })
  return { registry, routes: new RouteMetrics(registry, LATENCY_BUCKETS), close: () => gcDurations.close() }
}
