import type { Logger } from 'pino'
import type { ChangeEvent } from '../shared/change-event.js'
import type { ChangeFeed } from '../shared/feed/change-feed.js'
import { SHARD_COUNT } from '../shared/shards.js'
import { LOG_TRIMMED, type KeyStore } from '../shared/store/key-store.js'
import type { VerifierMetrics } from './verifier-metrics.js'

/** Where a change must go once it is known: the cache and the miss path. */
export interface ChangeSink {
  changed(event: Pick<ChangeEvent, 'hash' | 'rev' | 'kind'>): void
  dropShard(shard: number): void
  /**
   * The very first sync completed. The first sync replays nothing (there is no earlier position to replay
   * from), so anything cached before it may be older than a change it did not replay: forget it all.
   */
  firstSyncDone(): void
}

const CATCH_UP_BATCH = 1_000
const RESYNC_RETRY_MS = { first: 100, max: 2_000 }

/**
 * Keeps the cache in step with the store, shard by shard. It applies published events in revision order
 * and, when the feed skips a revision or reconnects, replays the missed ones from the shard's change log —
 * or, if the log no longer reaches back that far, drops the shard's cache entries. Pub/sub is the fast
 * path, the log is the truth.
 */
export class ShardSync {
  /** Last revision applied per shard; -1 until the first sync. */
  private readonly applied = new Array<number>(SHARD_COUNT).fill(-1)
  private readonly catchingUp = new Map<number, Promise<void>>()
  private readonly wanted = new Array<number>(SHARD_COUNT).fill(0)
  private subscribed = false
  /** Bumped by every (re)subscription and by stop(): work of an older generation gives up. */
  private generation = 0
  /** The generation whose resync completed: current only if it is the latest. */
  private syncedGeneration = -1
  private everSynced = false
  private lastResync: Promise<void> = Promise.resolve()

  constructor(
    private readonly store: KeyStore,
    private readonly feed: ChangeFeed,
    private readonly sink: ChangeSink,
    private readonly metrics: VerifierMetrics,
    private readonly log: Logger,
  ) {}

  /**
   * Subscribes and syncs; resolves when ready. If Redis is down it waits; the feed's reconnect subscribes
   * and syncs by itself (readiness tells when).
   */
  async start(): Promise<void> {
    await this.feed.subscribe({
      onEvent: (event) => this.onEvent(event),
      onSubscribed: () => {
        this.subscribed = true
        this.lastResync = this.resyncUntilDone(++this.generation)
      },
      onDisconnected: () => {
        this.subscribed = false
        this.generation++
        this.log.warn('change feed disconnected; will resync on reconnect')
      },
    })
    await this.lastResync
  }

  /** Subscribed, and the resync that followed the latest subscription has completed: the cache is current. */
  get ready(): boolean {
    return this.subscribed && this.syncedGeneration === this.generation
  }

  /** Stops retrying; the feed and store are closed by their owner. */
  stop(): void {
    this.generation++
    this.subscribed = false
  }

  /**
   * Resyncs after a (re)subscription, retrying with backoff: the store's connection may come up after the
   * subscriber's, and a verifier that never resyncs would never be ready.
   */
  private async resyncUntilDone(generation: number): Promise<void> {
    for (let delay = RESYNC_RETRY_MS.first; generation === this.generation; delay = Math.min(delay * 2, RESYNC_RETRY_MS.max)) {
      try {
        await this.resync()
        if (generation !== this.generation) return
        this.syncedGeneration = generation
        if (!this.everSynced) {
          this.everSynced = true
          this.sink.firstSyncDone()
        }
        return
      } catch (err) {
        this.log.warn({ err, retryInMs: delay }, 'resync failed; retrying')
        await new Promise((resolve) => setTimeout(resolve, delay).unref())
      }
    }
  }

  /** Reads every shard's revision and catches up where the cache is behind. */
  private async resync(): Promise<void> {
    // Events applied while the read is in flight may pass the revision it returns: compare with before.
    const before = [...this.applied]
    const revisions = await this.store.readRevisions()
    await Promise.all(revisions.map((revision, shard) => this.reconcile(shard, revision, before[shard]!)))
  }

  private async reconcile(shard: number, revision: number, appliedBefore: number): Promise<void> {
    if (this.applied[shard]! < 0) {
      this.applied[shard] = revision
    } else if (revision < appliedBefore) {
      // The counter went backwards: Redis lost data (restart without persistence). Nothing cached can be trusted.
      this.log.warn({ shard, applied: appliedBefore, revision }, 'shard revision went backwards; dropping its cache')
      this.sink.dropShard(shard)
      this.metrics.cacheDrops.inc()
      this.applied[shard] = revision
    } else if (revision > this.applied[shard]!) {
      await this.catchUp(shard, revision)
    }
  }

  private onEvent(event: ChangeEvent): void {
    const shard = event.shard
    if (shard < 0 || shard >= SHARD_COUNT) return
    this.metrics.eventsReceived.inc()
    // Whatever else happens, nothing older than this event may stay in the cache.
    this.sink.changed(event)
    const applied = this.applied[shard]!
    if (applied < 0 || event.rev <= applied) return
    if (event.rev === applied + 1 && !this.catchingUp.has(shard)) {
      this.applied[shard] = event.rev
      return
    }
    void this.catchUp(shard, event.rev).catch((err) => this.log.warn({ err, shard }, 'catch-up failed'))
  }

  /** Replays the shard's log up to `target`; one replay per shard at a time, extended if asked for more. */
  private catchUp(shard: number, target: number): Promise<void> {
    this.wanted[shard] = Math.max(this.wanted[shard]!, target)
    const running = this.catchingUp.get(shard)
    if (running) return running
    const run = this.replay(shard).finally(() => this.catchingUp.delete(shard))
    this.catchingUp.set(shard, run)
    return run
  }

  private async replay(shard: number): Promise<void> {
    this.metrics.catchUps.inc()
    while (this.applied[shard]! < this.wanted[shard]!) {
      const changes = await this.store.readChanges(shard, this.applied[shard]!, CATCH_UP_BATCH)
      if (changes === LOG_TRIMMED) {
        this.log.warn({ shard }, 'change log trimmed past our position; dropping the shard cache')
        this.sink.dropShard(shard)
        this.metrics.cacheDrops.inc()
        this.applied[shard] = this.wanted[shard]!
        return
      }
      if (changes.length === 0) {
        // Nothing logged past our position although an event said so: nothing more to apply.
        this.applied[shard] = this.wanted[shard]!
        return
      }
      for (const change of changes) this.sink.changed(change)
      this.applied[shard] = changes[changes.length - 1]!.rev
    }
  }
}
