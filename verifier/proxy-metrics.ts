import type { Registry } from 'prom-client'
import { exported, HistogramTally } from '../shared/http/route-metrics.js'
import { LATENCY_BUCKETS } from '../shared/http/metrics-registry.js'

/** Who chose a response's status: Keygate itself (a refusal, 502/503/504, …) or the upstream, passed through. */
export type AnswerSource = 'keygate' | 'upstream'

export interface ProxyMetrics {
  /** A response's status is decided (counted whether or not the response then completes). */
  answered(status: number, source: AnswerSource): void
  /** A response was sent in full, `seconds` after its request arrived. */
  finished(status: number, source: AnswerSource, seconds: number): void
}

interface Series {
  labels: { status: string; source: AnswerSource }
  count: number
  time: HistogramTally
}

/**
 * The reverse proxy's counter and latency histogram, by status and source, counted in plain numbers per request
 * and handed to prom-client when /metrics is scraped (shared/http/route-metrics.ts says why).
 */
export function createProxyMetrics(registry: Registry): ProxyMetrics {
  const children = new Map<string, Series>()
  registry.registerMetric(
    exported({
      name: 'keygate_proxy_requests_total',
      help: 'Requests through the reverse proxy, by status answered and who chose it (keygate or upstream)',
      type: 'counter',
      values: () => [...children.values()].map((series) => ({ labels: series.labels, value: series.count })),
    }),
  )
  const DURATION = 'keygate_proxy_request_duration_seconds'
  registry.registerMetric(
    exported({
      name: DURATION,
      help: 'Through the reverse proxy, from a request arriving to the last byte of its response (responses sent in full), by status and source',
      type: 'histogram',
      // Only the series that saw a response sent in full: a status only ever answered has no durations.
      values: () =>
        [...children.values()].filter((s) => s.time.observed > 0).flatMap((s) => s.time.values(DURATION, s.labels)),
    }),
  )
  // The upstream's time is included: up to UPSTREAM_TIMEOUT_MS (default 30 s), then 504.
  const buckets = [...LATENCY_BUCKETS, 5, 10, 30]
  const series = (status: number, source: AnswerSource): Series => {
    const byStatus = source === 'upstream' ? upstream : keygate
    let found = byStatus.get(status)
    if (found === undefined) {
      found = { labels: { status: String(status), source }, count: 0, time: new HistogramTally(buckets) }
      byStatus.set(status, found)
      children.set(`${source} ${status}`, found)
    }
    return found
  }
  const upstream = new Map<number, Series>()
  const keygate = new Map<number, Series>()
  return {
    answered: (status, source) => void series(status, source).count++,
    finished: (status, source, seconds) => series(status, source).time.observe(seconds),
  }
}
