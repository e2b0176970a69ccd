import { Counter, Histogram, type Registry } from 'prom-client'
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
  count: { inc(): void }
  time: { observe(seconds: number): void }
}

/**
 * The reverse proxy's counter and latency histogram. prom-client's labels() hashes the label values on every
 * call; the labelled children are kept here instead, one pair per status and source seen (a bounded set).
 */
export function createProxyMetrics(registry: Registry): ProxyMetrics {
  const requests = new Counter({
    name: 'keygate_proxy_requests_total',
    help: 'Requests through the reverse proxy, by status answered and who chose it (keygate or upstream)',
    labelNames: ['status', 'source'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'keygate_proxy_request_duration_seconds',
    help: 'Through the reverse proxy, from a request arriving to the last byte of its response (responses sent in full), by status and source',
    labelNames: ['status', 'source'],
    // The upstream's time is included: up to UPSTREAM_TIMEOUT_MS (default 30 s), then 504.
    buckets: [...LATENCY_BUCKETS, 5, 10, 30],
    registers: [registry],
  })
  const children = new Map<string, Series>()
  const series = (status: number, source: AnswerSource): Series => {
    const id = source + status
    let found = children.get(id)
    if (found === undefined) {
      const labels = [String(status), source]
      children.set(id, (found = { count: requests.labels(...labels), time: duration.labels(...labels) }))
    }
    return found
  }
  return {
    answered: (status, source) => series(status, source).count.inc(),
    finished: (status, source, seconds) => series(status, source).time.observe(seconds),
  }
}
