import type { Logger } from 'pino'
import { Counter, Gauge, type Registry } from 'prom-client'
import { SHARD_COUNT, shardOf } from '../shared/shards.js'
import type { ApiKeyStore } from '../shared/store/api-keys/api-key-store.js'
import { BloomFilter, HashWords } from './bloom-filter.js'

/**
 * Every key hash the store holds, in a Bloom filter, so that a hash no key has can be told apart without a read.
 *
 * Built from the store (scanKeyHashes) once the first sync is done, and kept current by every change applied since:
 * the builder adds each changed hash as the change is applied, to the filter in use and to the one being built. A
 * build trusts a shard only if none of its changes were skipped meanwhile, so for each shard it trusts, the filter
 * holds every key of every revision the verifier has applied: a key stored before the scan began is in the scan, one
 * created after it was added when its change was applied.
 *
 * A shard whose changes were skipped (its cache dropped: a trimmed log, an epoch or instance change) is "unsure" until
 * the next build: `mayExist` says yes for all its hashes, so they are read from the store. So is every shard until the
 * first build ends. Deleted keys stay in the filter (a false positive costs one read) until a build, which happens
 * when the filter holds more than its capacity.
 */
export class KnownHashes {
  private filter: BloomFilter | undefined
  private readonly trusted = new Array<boolean>(SHARD_COUNT).fill(false)
  /** Per shard, how many times its changes were skipped: a build trusts the shards whose count did not move. */
  private readonly drops = new Array<number>(SHARD_COUNT).fill(0)
  /** The hashes gathered by the build in progress. */
  private gathering: HashWords | undefined
  private started = false
  private stopped = false
  /** Another build is due once the one in progress (or the pause after one) is over. */
  private wanted = false
  private timer: NodeJS.Timeout | undefined
  private readonly builds: Counter

  constructor(
    private readonly store: Pick<ApiKeyStore, 'scanKeyHashes'>,
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.builds = new Counter({
      name: 'keygate_verify_filter_builds_total',
      help: 'Builds of the filter of known key hashes from the store (at start, after a cache drop, when too full)',
      registers: [registry],
    })
    // Read at scrape time from the filter in use (none: 0).
    const gauge = (name: string, help: string, value: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(value())
        },
      })
    gauge('keygate_verify_filter_bits', 'Size of the filter of known key hashes, in bits', () => this.filter?.bits ?? 0)
    gauge(
      'keygate_verify_filter_hashes',
      'Key hashes in the filter of known key hashes (deleted keys included until the next build)',
      () => this.filter?.count ?? 0,
    )
    gauge(
      'keygate_verify_filter_fill_ratio',
      'Share of the filter bits set: about 0.5 at capacity, when false positives reach about 1%',
      () => this.filter?.fillRatio ?? 0,
    )
    gauge(
      'keygate_verify_filter_unsure_shards',
      'Shards the filter cannot answer for (not built yet, or changes skipped since): their unknown keys read Redis',
      () => this.trusted.filter((trusted) => !trusted).length,
    )
  }

  /** False only if no key has this hash, as of every change this verifier has applied to the hash's shard. */
  mayExist(hash: string): boolean {
    return !this.trusted[shardOf(hash)] || this.filter!.has(hash)
  }

  /** A key with this hash was created or changed (a change applied, or the control plane's own write). */
  add(hash: string): void {
    this.gathering?.add(hash)
    if (this.filter === undefined) return
    this.filter.add(hash)
    if (this.filter.overfull) this.rebuild()
  }

  /** Changes of the shard were skipped: keys created by them may be missing until the next build. */
  dropShard(shard: number): void {
    this.trusted[shard] = false
    this.drops[shard]!++
    this.rebuild()
  }

  /**
   * Builds the filter for the first time. Call it once the first sync is done: that sync replays nothing, so what
   * the verifier applied before it cannot be trusted to have added every hash.
   */
  start(): void {
    this.started = true
    this.rebuild()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  /** Starts a build soon: every reason for one in the same turn (64 shard drops at a failover) shares it. */
  private rebuild(): void {
    if (!this.started || this.stopped) return
    if (this.gathering || this.timer) {
      this.wanted = true
      return
    }
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.build()
    }, 0)
    this.timer.unref()
  }

  private async build(): Promise<void> {
    const built = await this.gather()
    if (this.stopped) return
    // A pause before the next build: a shard dropped over and over must not turn into back-to-back scans.
    this.timer = setTimeout(
      () => {
        this.timer = undefined
        if (this.wanted || !built) {
          this.wanted = false
          this.rebuild()
        }
      },
      built ? REBUILD_PAUSE_MS : RETRY_MS,
    )
    this.timer.unref()
  }

  /** Scans the store into a new filter and puts it in use; false if the scan failed (or was stopped). */
  private async gather(): Promise<boolean> {
    const gathering = new HashWords()
    this.gathering = gathering
    const drops = [...this.drops]
    const startedAt = performance.now()
    try {
      for await (const batch of this.store.scanKeyHashes()) {
        if (this.stopped) return false
        for (const hash of batch) gathering.add(hash)
      }
    } catch (err) {
      this.log.warn(
        { err },
        'cannot build the filter of known key hashes; unknown keys are read from the store meanwhile',
      )
      return false
    } finally {
      this.gathering = undefined
    }
    const filter = new BloomFilter(gathering.length * HEADROOM)
    gathering.addTo(filter)
    this.filter = filter
    drops.forEach((count, shard) => {
      if (this.drops[shard] === count) this.trusted[shard] = true
    })
    this.builds.inc()
    this.log.info(
      { hashes: filter.count, bits: filter.bits, ms: Math.round(performance.now() - startedAt) },
      'filter of known key hashes built',
    )
    return true
  }
}

// Sized for twice the keys found: creations fill the other half before a rebuild is due.
const HEADROOM = 2
const REBUILD_PAUSE_MS = 1_000
const RETRY_MS = 5_000
