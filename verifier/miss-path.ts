import { Counter, type Registry } from 'prom-client'
import type { KeyRecord } from '../shared/keys/records.js'
import type { KeyCache } from './key-cache.js'
import type { KeyLookup } from './key-lookup.js'
import type { KnownHashes } from './known-hashes.js'

/** What the miss path needs of the shard sync. */
export interface Freshness {
  /** The cache is confirmed current within the staleness bound. */
  readonly current: boolean
  /**
   * Resolves once a revision poll that started after this call has caught up every shard (or dropped it): every
   * change committed before the call has then been applied. Rejects if the poll failed.
   */
  requestPoll(): Promise<void>
}

/**
 * A key the cache does not hold: read from the store (KeyLookup), unless the filter of known hashes shows that no key
 * has its hash — so that a flood of random keys costs a poll per batch, not a read per key.
 *
 * The filter knows the keys of the changes applied so far; a key may have been created since, and a client that got
 * it from createKey a moment ago must not be refused. So a filter negative is confirmed by a revision poll that
 * starts after the request arrived (never one already in flight: it may predate the creation). Every negative that
 * arrives before that poll starts shares it; under a flood these polls are SPACING_MS apart. The poll catches up
 * wherever the verifier was behind, which adds the new keys' hashes; if the filter still says no, no key had the hash
 * when the request arrived: NOT_FOUND, no read. Anything else — a false positive, a shard the filter is unsure of,
 * a failed poll, a cache beyond the staleness bound — reads the key.
 */
export class MissPath {
  private readonly negatives: Counter
  private next: Promise<void> | undefined
  private lastStart = Number.NEGATIVE_INFINITY

  constructor(
    private readonly lookup: KeyLookup,
    private readonly known: KnownHashes,
    private readonly cache: KeyCache,
    private readonly sync: Freshness,
    registry: Registry,
  ) {
    this.negatives = new Counter({
      name: 'keygate_verify_filter_negatives_total',
      help: 'Cache misses answered NOT_FOUND by the filter of known key hashes (after a fresh poll), without a key read',
      registers: [registry],
    })
  }

  /**
   * A poll that starts after this call; every call until it starts shares it. Started at once (in the next turn of the
   * event loop, which gathers the requests that came in together) unless the last one started under SPACING_MS ago.
   * Real time, not an injected clock: it spaces real timers.
   */
  private freshPoll(): Promise<void> {
    if (this.next === undefined) {
      const due = new Promise<void>((resolve) => {
        // A timer counts from the event loop's last tick, so it may fire early: then it waits for the rest.
        const whenDue = () => {
          const wait = this.lastStart + SPACING_MS - performance.now()
          if (wait > 0) setTimeout(whenDue, Math.ceil(wait))
          else resolve()
        }
        if (this.lastStart + SPACING_MS > performance.now()) whenDue()
        else setImmediate(resolve)
      })
      this.next = due.then(() => {
        this.next = undefined
        this.lastStart = performance.now()
        return this.sync.requestPoll()
      })
    }
    return this.next
  }

  read(hash: string): Promise<KeyRecord | null> {
    if (!this.sync.current || this.known.mayExist(hash)) return this.lookup.read(hash)
    // As a read's (RecordLookup): an answer that spans a drop of the cache is not remembered.
    const epoch = this.cache.epoch
    return this.freshPoll().then(
      () => {
        if (this.known.mayExist(hash)) return this.lookup.read(hash)
        this.negatives.inc()
        if (epoch === this.cache.epoch) this.cache.offer(hash, null)
        return null
      },
      () => this.lookup.read(hash),
    )
  }
}

// At most one poll per 10 ms for misses. A poll costs Redis as much as many key reads (SORT_RO and INFO against one
// HMGET), so batches must be large for a flood to cost Redis less than a read each: spaced so, a batch holds F/100 keys
// of a flood of F a second, and a verifier's polls for misses cost Redis at most 100 polls a second whatever the flood.
// A miss waits for the spacing only while polls are that frequent: a lone unknown key is polled for at once.
const SPACING_MS = 10
