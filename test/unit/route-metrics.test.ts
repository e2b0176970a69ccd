import { describe, expect, it } from 'vitest'
import { Counter, Histogram, Registry } from 'prom-client'
import { LATENCY_BUCKETS } from '../../shared/http/metrics-registry.js'
import { RouteMetrics } from '../../shared/http/route-metrics.js'
import { createProxyMetrics } from '../../verifier/proxy-metrics.js'
import { createVerifierMetrics } from '../../verifier/verifier-metrics.js'
import { VERDICT_CODES } from '../../shared/verification/verification.js'

/**
 * The route, proxy and verdict metrics are counted in plain numbers and handed to prom-client at scrape time. What
 * /metrics says must be what prom-client's own Counter and Histogram said for the same observations: the same
 * samples, HELP and TYPE lines, buckets (a value on a bound counts in it) and default labels. Only the order of
 * labels within a series and of the series may differ: neither is part of the exposition's meaning.
 */
function registry(): Registry {
  const made = new Registry()
  made.setDefaultLabels({ service: 'verifier' })
  return made
}

/** The exposition's lines of these metrics, each series' labels sorted, in sorted order. */
async function exposition(from: Registry, ...names: string[]): Promise<string[]> {
  const lines = (await from.metrics()).split('\n').filter((line) => names.some((name) => line.includes(name)))
  return lines
    .map((line) => {
      if (line.startsWith('#')) return line
      const [, name, labels, value] = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)!
      return `${name}{${(labels?.match(/\w+="(?:[^"\\]|\\.)*"/g) ?? []).sort().join(',')}} ${value}`
    })
    .sort()
}

// Bounds themselves, between them, beyond the last, and 0.
const DURATIONS = [0, 0.0001, 0.00017, 0.001, 0.0025, 0.3, 2.5, 2.6, 40]

describe('metrics counted in plain numbers', () => {
  it('export keygate_http_requests_total and its duration histogram as prom-client did', async () => {
    const ours = registry()
    const routes = new RouteMetrics(ours, LATENCY_BUCKETS)
    // The fast paths take their route's tally when built, before any request.
    routes.route('/v1/authorize')
    // …and the count of their usual answer: no series until it is counted on.
    const verifyKey = routes.route('/v1/keys.verifyKey')
    const answered = verifyKey.countOf('POST', 200)
    const reference = registry()
    const requests = new Counter({
      name: 'keygate_http_requests_total',
      help: 'HTTP requests answered, by route, method and status',
      labelNames: ['route', 'method', 'status'],
      registers: [reference],
    })
    const duration = new Histogram({
      name: 'keygate_http_request_duration_seconds',
      help: 'Time from request to response, by route',
      labelNames: ['route'],
      buckets: [...LATENCY_BUCKETS],
      registers: [reference],
    })
    const names = ['keygate_http_requests_total', 'keygate_http_request_duration_seconds']
    expect(await exposition(ours, ...names)).toStrictEqual(await exposition(reference, ...names))
    for (const [i, seconds] of DURATIONS.entries()) {
      const [route, method, status] = [
        i % 3 === 0 ? '/v1/keys.verifyKey' : 'unmatched',
        i % 2 === 0 ? 'POST' : 'GET',
        [200, 404, 503][i % 3]!,
      ]
      if (route === verifyKey.route && method === 'POST' && status === 200) verifyKey.observeOn(answered, seconds)
      else routes.observe(route, method, status, seconds)
      requests.inc({ route, method, status })
      duration.observe({ route }, seconds)
    }
    // Scraped twice: nothing is counted again.
    await ours.metrics()
    expect(await exposition(ours, ...names)).toStrictEqual(await exposition(reference, ...names))
  })

  it('export the proxy counter and histogram as prom-client did, durations only for responses sent in full', async () => {
    const ours = registry()
    const proxy = createProxyMetrics(ours)
    const reference = registry()
    const requests = new Counter({
      name: 'keygate_proxy_requests_total',
      help: 'Requests through the reverse proxy, by status answered and who chose it (keygate or upstream)',
      labelNames: ['status', 'source'],
      registers: [reference],
    })
    const duration = new Histogram({
      name: 'keygate_proxy_request_duration_seconds',
      help: 'Through the reverse proxy, from a request arriving to the last byte of its response (responses sent in full), by status and source',
      labelNames: ['status', 'source'],
      buckets: [...LATENCY_BUCKETS, 5, 10, 30],
      registers: [reference],
    })
    for (const [i, seconds] of DURATIONS.entries()) {
      const [status, source] = [[200, 401, 502][i % 3]!, i % 3 === 0 ? 'upstream' : 'keygate'] as const
      proxy.answered(status, source)
      requests.inc({ status, source })
      // A response cut short is counted, never timed.
      if (status === 502) continue
      proxy.finished(status, source, seconds)
      duration.observe({ status, source }, seconds)
    }
    const names = ['keygate_proxy_requests_total', 'keygate_proxy_request_duration_seconds']
    await ours.metrics()
    expect(await exposition(ours, ...names)).toStrictEqual(await exposition(reference, ...names))
  })

  it('export verdicts, cache hits and misses as counted, however often they are scraped', async () => {
    const ours = registry()
    const metrics = createVerifierMetrics(ours, {
      cacheSize: () => 0,
      stalenessSeconds: () => 0,
      lastPollAgeSeconds: () => 0,
      maxStalenessSeconds: 5,
    })
    const reference = registry()
    const verdicts = new Counter({
      name: 'keygate_verify_verdicts_total',
      help: 'verifyKey answers by verdict code',
      labelNames: ['code'],
      registers: [reference],
    })
    const hits = new Counter({
      name: 'keygate_verify_cache_hits_total',
      help: 'Verifications answered from the cache',
      registers: [reference],
    })
    const misses = new Counter({
      name: 'keygate_verify_cache_misses_total',
      help: 'Verifications that read the store',
      registers: [reference],
    })
    for (const code of VERDICT_CODES) verdicts.inc({ code }, 0)
    const names = [
      'keygate_verify_verdicts_total',
      'keygate_verify_cache_hits_total',
      'keygate_verify_cache_misses_total',
    ]
    expect(await exposition(ours, ...names)).toStrictEqual(await exposition(reference, ...names))
    for (let i = 0; i < 5; i++) {
      metrics.verdicts.VALID.inc()
      verdicts.inc({ code: 'VALID' })
      metrics.cacheHits.inc()
      hits.inc()
    }
    metrics.verdicts.DISABLED.inc()
    verdicts.inc({ code: 'DISABLED' })
    metrics.cacheMisses.inc()
    misses.inc()
    await ours.metrics()
    await ours.metrics()
    expect(await exposition(ours, ...names)).toStrictEqual(await exposition(reference, ...names))
  })
})
