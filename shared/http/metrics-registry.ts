import { collectDefaultMetrics, Counter, Registry } from 'prom-client'
import { RouteMetrics } from './route-metrics.js'
import { redisErrorCounts } from '../store/redis/redis-connection.js'

/** Latency buckets, seconds: from a cached verdict (~100 µs) to a slow Redis round trip. */
export const LATENCY_BUCKETS: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
]

export interface HttpMetrics {
  registry: Registry
  /** keygate_http_requests_total and keygate_http_request_duration_seconds, by route. */
  routes: RouteMetrics
}

/** One registry per server (not prom-client's global), so several servers can live in one process. */
export function createMetricsRegistry(service: string): HttpMetrics {
  const registry = new Registry()
  registry.setDefaultLabels({ service })
  collectDefaultMetrics({ register: registry, prefix: 'keygate_' })
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
  return { registry, routes: new RouteMetrics(registry, LATENCY_BUCKETS) }
}
