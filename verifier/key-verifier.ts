import type { Logger } from 'pino'
import type { Registry } from 'prom-client'
import type { ChangeEvent } from '../shared/change-event.js'
import type { Clock } from '../shared/clock.js'
import type { ChangeFeed } from '../shared/feed/change-feed.js'
import { hashKey } from '../shared/key-material.js'
import type { KeyRecord } from '../shared/records.js'
import type { KeyStore } from '../shared/store/key-store.js'
import { verify, type Verdict, type VerifyRequest } from '../shared/verification.js'
import { KeyCache, type KeyCacheOptions } from './key-cache.js'
import { KeyLookup } from './key-lookup.js'
import { ShardSync, type ChangeSink } from './shard-sync.js'
import { createVerifierMetrics, type VerifierMetrics } from './verifier-metrics.js'

export interface KeyVerifierDeps {
  store: KeyStore
  feed: ChangeFeed
  clock: Clock
  log: Logger
  registry: Registry
  cache: KeyCacheOptions
}

/**
 * Answers "is this key valid?" from memory: hash → cache → the pure rules. A miss reads one record from the
 * store; change events keep the cache current (ShardSync).
 */
export class KeyVerifier {
  private readonly cache: KeyCache
  private readonly lookup: KeyLookup
  private readonly sync: ShardSync
  private readonly clock: Clock
  readonly metrics: VerifierMetrics

  constructor(deps: KeyVerifierDeps) {
    this.clock = deps.clock
    this.cache = new KeyCache(deps.cache)
    this.lookup = new KeyLookup(deps.store, this.cache)
    this.metrics = createVerifierMetrics(deps.registry, () => this.cache.size)
    const sink: ChangeSink = {
      changed: (event) => this.applyChange(event),
      dropShard: (shard) => this.cache.dropShard(shard),
      firstSyncDone: () => this.cache.clear(),
    }
    this.sync = new ShardSync(deps.store, deps.feed, sink, this.metrics, deps.log.child({ component: 'shard-sync' }))
  }

  /** Subscribes to changes and syncs; resolves when the verifier can answer correctly. */
  start(): Promise<void> {
    return this.sync.start()
  }

  get ready(): boolean {
    return this.sync.ready
  }

  /** Stops background work (resync retries); the store and feed are closed by whoever opened them. */
  stop(): void {
    this.sync.stop()
  }

  /**
   * A change this process itself just wrote: applied at once, so the control plane reads its own writes
   * without waiting for the published copy (which ShardSync still handles in revision order).
   */
  applyChange(event: Pick<ChangeEvent, 'hash' | 'rev' | 'kind'>): void {
    this.cache.invalidate(event.hash, event.rev)
    this.lookup.changed(event)
  }

  /**
   * Synchronous on a cache hit; a promise only when the store must be read. While the cache is not known
   * to be current (before the first sync, during a resync after a reconnect) it is not trusted: every
   * request reads through to the store, and fails with 503 if the store is unreachable too.
   */
  verify(key: string, request: VerifyRequest): Verdict | Promise<Verdict> {
    const hash = hashKey(key)
    const cached = this.sync.ready ? this.cache.get(hash) : undefined
    if (cached !== undefined) {
      this.metrics.cacheHits.inc()
      return this.decide(cached, request)
    }
    this.metrics.cacheMisses.inc()
    return this.lookup.read(hash).then((record) => this.decide(record, request))
  }

  private decide(record: KeyRecord | null, request: VerifyRequest): Verdict {
    const verdict = verify(record, request, this.clock.now())
    this.metrics.verdicts.labels(verdict.code).inc()
    return verdict
  }
}
