import type { Metric, Registry } from 'prom-client'

/**
 * keygate_http_requests_total{route,method,status} and keygate_http_request_duration_seconds{route}, counted in
 * plain numbers on the request path and handed to prom-client only when /metrics is scraped. prom-client's own
 * Counter and Histogram re-hash their label values on every inc/observe (a bound child included) and find a
 * histogram's bucket through string keys: string work on every request of a hot path, where plain numbers cost next
 * to nothing. The series, names and help texts are those prom-client exports; only when the work is done differs.
 */
export class RouteMetrics {
  private readonly tallies = new Map<string, RouteTally>()

  constructor(
    registry: Registry,
    private readonly bounds: readonly number[],
  ) {
    registry.registerMetric(
      exported({
        name: 'keygate_http_requests_total',
        help: 'HTTP requests answered, by route, method and status',
        type: 'counter',
        values: () => [...this.tallies.values()].flatMap((tally) => tally.requestValues()),
      }),
    )
    registry.registerMetric(
      exported({
        name: 'keygate_http_request_duration_seconds',
        help: 'Time from request to response, by route',
        type: 'histogram',
        values: () => [...this.tallies.values()].flatMap((tally) => tally.durationValues()),
      }),
    )
  }

  /** The tally of one route (the router's pattern, 'unmatched' for none): keep it, and observe on it. */
  route(route: string): RouteTally {
    let tally = this.tallies.get(route)
    if (tally === undefined) this.tallies.set(route, (tally = new RouteTally(route, this.bounds)))
    return tally
  }

  /** One response: its route, method, status and how long it took. */
  observe(route: string, method: string, status: number, seconds: number): void {
    this.route(route).observe(method, status, seconds)
  }
}

/** Responses of one method and status on a route: a fast path takes its usual one once and counts on it. */
export interface ResponseCount {
  count: number
}

/** One route's counts: responses by method and status, and a histogram of their durations. */
export class RouteTally {
  private readonly byMethod = new Map<string, Map<number, ResponseCount>>()
  private readonly durations: HistogramTally

  constructor(
    readonly route: string,
    bounds: readonly number[],
  ) {
    this.durations = new HistogramTally(bounds)
  }

  observe(method: string, status: number, seconds: number): void {
    this.observeOn(this.countOf(method, status), seconds)
  }

  /**
   * The count of responses of this method and status, kept for a fast path's usual answer: counting on it saves the
   * two Map look-ups per response that `observe` makes. A series appears with its first response, not before.
   */
  countOf(method: string, status: number): ResponseCount {
    let byStatus = this.byMethod.get(method)
    if (byStatus === undefined) this.byMethod.set(method, (byStatus = new Map<number, ResponseCount>()))
    let responses = byStatus.get(status)
    if (responses === undefined) byStatus.set(status, (responses = { count: 0 }))
    return responses
  }

  /** One response counted on `responses` (from `countOf` of this tally), and how long it took. */
  observeOn(responses: ResponseCount, seconds: number): void {
    responses.count++
    this.durations.observe(seconds)
  }

  requestValues(): ExportedValue[] {
    const values: ExportedValue[] = []
    for (const [method, byStatus] of this.byMethod) {
      for (const [status, { count }] of byStatus) {
        if (count > 0) values.push({ labels: { route: this.route, method, status: String(status) }, value: count })
      }
    }
    return values
  }

  durationValues(): ExportedValue[] {
    // As prom-client's histogram: a route's series appear with its first response, not when its tally is taken (the
    // fast paths take theirs when built).
    if (this.durations.observed === 0) return []
    return this.durations.values('keygate_http_request_duration_seconds', { route: this.route })
  }
}

/** A histogram's buckets, sum and count as plain numbers: observe() finds the bucket by comparing numbers. */
export class HistogramTally {
  /** Observations in each bucket (not cumulative); the last slot is above every bound. */
  private readonly buckets: Float64Array
  private sum = 0
  private count = 0

  /** How many values were observed. */
  get observed(): number {
    return this.count
  }

  constructor(private readonly bounds: readonly number[]) {
    this.buckets = new Float64Array(bounds.length + 1)
  }

  observe(value: number): void {
    let i = 0
    while (i < this.bounds.length && value > this.bounds[i]!) i++
    this.buckets[i]!++
    this.sum += value
    this.count++
  }

  /** Prometheus' _bucket (cumulative, le), _sum and _count samples of the histogram `name`, with these labels. */
  values(name: string, labels: Record<string, string>): ExportedValue[] {
    const values: ExportedValue[] = []
    let cumulative = 0
    this.bounds.forEach((bound, i) => {
      cumulative += this.buckets[i]!
      values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${name}_bucket` })
    })
    values.push(
      { labels: { ...labels, le: '+Inf' }, value: this.count, metricName: `${name}_bucket` },
      { labels, value: this.sum, metricName: `${name}_sum` },
      { labels, value: this.count, metricName: `${name}_count` },
    )
    return values
  }
}

/** One sample of an exported metric, as prom-client's Registry prints it. */
export interface ExportedValue {
  labels: Record<string, string | number>
  value: number
  metricName?: string
}

/**
 * A metric as prom-client's Registry reads one: a name, help, type and get() (getMetricsAsString and
 * getMetricsAsJSON call nothing else; reset is for resetMetrics). Its typings only name its own classes, hence the
 * one cast: the object honours the part of their interface the registry uses.
 */
export function exported(spec: {
  name: string
  help: string
  type: 'counter' | 'histogram'
  values(): ExportedValue[]
}) {
  const metric = {
    name: spec.name,
    help: spec.help,
    type: spec.type,
    aggregator: 'sum',
    get: async () => ({ name: spec.name, help: spec.help, type: spec.type, aggregator: 'sum', values: spec.values() }),
    reset: () => {},
  }
  return metric as unknown as Metric
}
