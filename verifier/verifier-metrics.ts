import { Counter, Gauge, type Registry } from 'prom-client'
import { VERDICT_CODES } from '../shared/verification.js'

export interface VerifierMetrics {
  verdicts: Counter<'code'>
  cacheHits: Counter
  cacheMisses: Counter
  eventsReceived: Counter
  catchUps: Counter
  cacheDrops: Counter
}

export function createVerifierMetrics(registry: Registry, cacheSize: () => number): VerifierMetrics {
  const metrics: VerifierMetrics = {
    verdicts: new Counter({
      name: 'keygate_verify_verdicts_total', help: 'verifyKey answers by verdict code', labelNames: ['code'], registers: [registry],
    }),
    cacheHits: new Counter({ name: 'keygate_verify_cache_hits_total', help: 'Verifications answered from the cache', registers: [registry] }),
    cacheMisses: new Counter({ name: 'keygate_verify_cache_misses_total', help: 'Verifications that read the store', registers: [registry] }),
    eventsReceived: new Counter({ name: 'keygate_change_events_total', help: 'Change events received from the feed', registers: [registry] }),
    catchUps: new Counter({ name: 'keygate_catch_ups_total', help: 'Replays of a shard change log after a gap or reconnect', registers: [registry] }),
    cacheDrops: new Counter({ name: 'keygate_cache_drops_total', help: 'Shard caches dropped because their changes could not be replayed', registers: [registry] }),
  }
  for (const code of VERDICT_CODES) metrics.verdicts.labels(code)
  new Gauge({ name: 'keygate_cache_keys', help: 'Key records in the verifier cache', registers: [registry], collect() { this.set(cacheSize()) } })
  return metrics
}
