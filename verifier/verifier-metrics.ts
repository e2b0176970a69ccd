import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { VERDICT_CODES, type VerdictCode } from '../shared/verification/verification.js'

/**
 * A count kept as a plain number where it is counted (the verification path) and handed to its prom-client Counter
 * only when /metrics is scraped: prom-client re-hashes label values on every inc, even through a bound child.
 */
export class Tally {
  value = 0
  inc(): void {
    this.value++
  }
}

export interface VerifierMetrics {
  /** keygate_verify_verdicts_total{code}. */
  verdicts: Record<VerdictCode, Tally>
  cacheHits: Tally
  cacheMisses: Tally
  /** Keys refused for a wrong checksum, before any lookup (shared/keys/key-checksum.ts). */
  checksumRefusals: Tally
  eventsReceived: Counter
  /** Publish → applied here, for live events (their publish time is the store's clock: skew shows here). */
  propagation: Histogram
  catchUps: Counter
  cacheDrops: Counter
  pollErrors: Counter
  /** Answers given while the cache was beyond the staleness bound, by what was done: read-through or served. */
  staleAnswers: Counter<'mode'>
  revisionLag: Gauge
  feedConnected: Gauge
}

export interface VerifierGauges {
  cacheSize(): number
  /** Seconds since the last poll that confirmed the cache current. */
  stalenessSeconds(): number
  /** Seconds since the last poll that got an answer. */
  lastPollAgeSeconds(): number
  /** The staleness bound (MAX_STALENESS_MS), in seconds. */
  maxStalenessSeconds: number
}

export function createVerifierMetrics(registry: Registry, gauges: VerifierGauges): VerifierMetrics {
  const verdicts = Object.fromEntries(VERDICT_CODES.map((code) => [code, new Tally()])) as Record<VerdictCode, Tally>
  const cacheHits = new Tally()
  const cacheMisses = new Tally()
  const checksumRefusals = new Tally()
  new Counter({
    name: 'keygate_verify_verdicts_total',
    help: 'verifyKey answers by verdict code',
    labelNames: ['code'],
    registers: [registry],
    collect() {
      this.reset()
      // Every code exported, at 0 until it is first answered: increase() then sees the first answers.
      for (const code of VERDICT_CODES) this.inc({ code }, verdicts[code].value)
    },
  })
  new Counter({
    name: 'keygate_verify_cache_hits_total',
    help: 'Verifications answered from the cache',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(cacheHits.value)
    },
  })
  new Counter({
    name: 'keygate_verify_cache_misses_total',
    help: 'Verifications that read the store',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(cacheMisses.value)
    },
  })
  new Counter({
    name: 'keygate_verify_checksum_refusals_total',
    help: 'Keys refused as NOT_FOUND because their checksum does not match, without a cache lookup or a Redis read',
    registers: [registry],
    collect() {
      this.reset()
      this.inc(checksumRefusals.value)
    },
  })
  const metrics: VerifierMetrics = {
    verdicts,
    cacheHits,
    cacheMisses,
    checksumRefusals,
    eventsReceived: new Counter({
      name: 'keygate_change_events_total',
      help: 'Change events received from the feed',
      registers: [registry],
    }),
    propagation: new Histogram({
      name: 'keygate_change_propagation_seconds',
      help: 'From a change being published (store clock) to this verifier applying it (its clock): how fast a revocation lands',
      buckets: [
        0.0001, 0.0002, 0.0003, 0.0005, 0.00075, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
      ],
      registers: [registry],
    }),
    catchUps: new Counter({
      name: 'keygate_catch_ups_total',
      help: 'Replays of a shard change log after a gap or reconnect',
      registers: [registry],
    }),
    cacheDrops: new Counter({
      name: 'keygate_cache_drops_total',
      help: 'Shard caches dropped because their changes could not be replayed',
      registers: [registry],
    }),
    pollErrors: new Counter({
      name: 'keygate_revision_poll_errors_total',
      help: 'Revision polls that failed',
      registers: [registry],
    }),
    staleAnswers: new Counter({
      name: 'keygate_stale_answers_total',
      help: 'Verifications answered while the cache was beyond the staleness bound, by mode (read-through or served)',
      labelNames: ['mode'],
      registers: [registry],
    }),
    revisionLag: new Gauge({
      name: 'keygate_revision_lag',
      help: 'Largest number of revisions a shard was behind at the last poll',
      registers: [registry],
    }),
    feedConnected: new Gauge({
      name: 'keygate_change_feed_connected',
      help: '1 while subscribed to the change feed',
      registers: [registry],
    }),
  }
  // Every series exported at 0 from the start (labels() alone creates none): increase() then sees the first answers.
  for (const mode of ['read-through', 'served']) metrics.staleAnswers.labels(mode).inc(0)
  new Gauge({
    name: 'keygate_cache_keys',
    help: 'Key records in the verifier cache',
    registers: [registry],
    collect() {
      this.set(gauges.cacheSize())
    },
  })
  new Gauge({
    name: 'keygate_cache_hit_ratio',
    help: 'Cache hits / verifications since start',
    registers: [registry],
    collect() {
      const [hits, misses] = [cacheHits.value, cacheMisses.value]
      this.set(hits + misses === 0 ? 0 : hits / (hits + misses))
    },
  })
  new Gauge({
    name: 'keygate_staleness_seconds',
    help: 'Seconds since the last poll that confirmed the cache current',
    registers: [registry],
    collect() {
      this.set(finite(gauges.stalenessSeconds()))
    },
  })
  // Exported so alerts compare staleness with the bound each process was configured with, not a copied number.
  new Gauge({
    name: 'keygate_max_staleness_seconds',
    help: 'The staleness bound (MAX_STALENESS_MS): beyond it the cache is not trusted',
    registers: [registry],
  }).set(gauges.maxStalenessSeconds)
  new Gauge({
    name: 'keygate_last_poll_age_seconds',
    help: 'Seconds since the last revision poll that got an answer',
    registers: [registry],
    collect() {
      this.set(finite(gauges.lastPollAgeSeconds()))
    },
  })
  return metrics
}

// Prometheus has +Inf, but a gauge that says "never" is clearer as -1.
const finite = (value: number) => (Number.isFinite(value) ? value : -1)
