import type { Logger } from 'pino'
import type { ChangeEvent } from '../shared/change-event.js'
import { wallMicros, type Clock } from '../shared/clock.js'
import type { ChangeFeed } from '../shared/feed/change-feed.js'
import { SHARD_COUNT } from '../shared/shards.js'
import {
  LOG_TRIMMED,
  type ChangeLogStore,
  type RevisionSnapshot,
  type ShardRevision,
} from '../shared/store/change-log/change-log-store.js'
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

export interface SyncOptions {
  /** A monotonic clock (staleness must not stretch when the wall clock steps back). */
  clock: Clock
  /** How often the shard revisions are polled (the repair path that needs neither pub/sub nor a control plane). */
  pollIntervalMs: number
  /** How long the cache may be trusted after the last poll that confirmed it current. */
  maxStalenessMs: number
}

const CATCH_UP_BATCH = 1_000
// Before the first successful poll, retry sooner than the interval: a verifier is useless until then.
const FIRST_POLL_RETRY_MS = { first: 50, max: 1_000 }

/**
 * Keeps the cache in step with the store, shard by shard, and knows how far it can be trusted.
 *
 * - Published events are applied at once (the millisecond path). A revision gap replays the shard's log;
 *   if the log no longer reaches back that far, the shard's cache entries are dropped.
 * - A poll of every shard's {epoch, rev} (one round trip, every `pollIntervalMs`, and at once after each
 *   (re)subscription) catches up wherever the cache is behind — so lost events are repaired whatever
 *   happened to pub/sub. A poll sent at t0 that completes its catch-ups confirms the cache current as of t0.
 * - `current` is true while the last confirmation is at most `maxStalenessMs` old. A change that completed
 *   at W is seen by every poll sent after W, so it is applied by W + maxStalenessMs at the latest, or the
 *   cache stops being trusted: that is the revocation bound.
 * - An epoch change (Redis lost the shard's data) drops the shard whatever the revisions say.
 */
export class ShardSync {
  /** Last revision applied per shard; -1 until the first poll. */
  private readonly applied = new Array<number>(SHARD_COUNT).fill(-1)
  private readonly epochs = new Array<string>(SHARD_COUNT).fill('')
  /** The store instance the cache was built from; another one (restart, failover) may hold rolled-back data. */
  private instance: string | undefined
  private readonly catchingUp = new Map<number, Promise<void>>()
  private readonly wanted = new Array<number>(SHARD_COUNT).fill(0)
  private confirmedAt = Number.NEGATIVE_INFINITY
  private lastPollOkAt = Number.NEGATIVE_INFINITY
  private everSynced = false
  private subscribed = false
  private stopped = false
  private inFlight: Promise<void> | undefined
  private queued: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private staleLogged = false

  constructor(
    private readonly store: ChangeLogStore,
    private readonly feed: ChangeFeed,
    private readonly sink: ChangeSink,
    private readonly metrics: VerifierMetrics,
    private readonly log: Logger,
    private readonly options: SyncOptions,
  ) {}

  /**
   * Subscribes, starts polling, and resolves at the first successful poll. Until then (Redis down) it keeps
   * trying; readiness says when it has succeeded.
   */
  async start(): Promise<void> {
    const subscribed = this.feed.subscribe({
      onEvent: (event) => this.onEvent(event),
      onSubscribed: () => {
        this.subscribed = true
        this.metrics.feedConnected.set(1)
        // Everything published while the feed was down is lost: poll now rather than at the next tick.
        void this.requestPoll().catch(() => {})
      },
      onDisconnected: () => {
        this.subscribed = false
        this.metrics.feedConnected.set(0)
        // Closing the feed is part of shutting down once the sync has stopped: nothing to warn about.
        if (!this.stopped) this.log.warn('change feed disconnected; polling keeps the cache current until it is back')
      },
    })
    subscribed.catch((err) => this.log.warn({ err }, 'change feed subscription failed; polling only until it succeeds'))
    // Prefer to be subscribed before the first poll (so nothing falls between them), but never wait long for it.
    await Promise.race([subscribed.catch(() => {}), delay(this.options.pollIntervalMs)])
    await this.firstPoll()
    this.scheduleNextPoll()
  }

  stop(): void {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
  }

  /** The cache may be trusted: synced once, and confirmed current within the staleness bound. */
  get current(): boolean {
    return this.options.clock.now() - this.confirmedAt <= this.options.maxStalenessMs
  }

  get isSubscribed(): boolean {
    return this.subscribed
  }

  /** Milliseconds since the last poll that confirmed the cache current (Infinity before the first). */
  get stalenessMs(): number {
    return this.options.clock.now() - this.confirmedAt
  }

  /** Milliseconds since the last poll that answered at all. */
  get lastPollAgeMs(): number {
    return this.options.clock.now() - this.lastPollOkAt
  }

  /** Polls now, or right after the poll in flight (a poll must start after the caller's reason for it). */
  requestPoll(): Promise<void> {
    if (!this.inFlight) return this.runPoll()
    this.queued ??= this.inFlight
      .catch(() => {})
      .then(() => {
        this.queued = undefined
        return this.runPoll()
      })
    return this.queued
  }

  private runPoll(): Promise<void> {
    const poll = this.poll().finally(() => {
      if (this.inFlight === poll) this.inFlight = undefined
    })
    this.inFlight = poll
    return poll
  }

  private async firstPoll(): Promise<void> {
    for (
      let wait = FIRST_POLL_RETRY_MS.first;
      !this.stopped && !this.everSynced;
      wait = Math.min(wait * 2, FIRST_POLL_RETRY_MS.max)
    ) {
      try {
        await this.requestPoll()
      } catch {
        await delay(wait)
      }
    }
  }

  private scheduleNextPoll(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.requestPoll()
        .catch(() => {})
        .finally(() => this.scheduleNextPoll())
    }, this.options.pollIntervalMs)
    this.timer.unref()
  }

  /** One poll: read every shard's position, catch up where behind, then confirm as of the time it was sent. */
  private async poll(): Promise<void> {
    const sentAt = this.options.clock.now()
    // Events applied while the read is in flight may pass what it returns: compare with before it.
    const before = [...this.applied]
    let snapshot: RevisionSnapshot
    try {
      snapshot = await this.store.readRevisions()
      this.lastPollOkAt = this.options.clock.now()
      const revisions = snapshot.shards
      this.metrics.revisionLag.set(Math.max(0, ...revisions.map((r, shard) => r.rev - Math.max(before[shard]!, 0))))
      if (this.instance !== undefined && snapshot.instance !== this.instance) {
        this.log.warn(
          { was: this.instance, now: snapshot.instance },
          'store instance changed (restart or failover: its data may be older); dropping the whole cache',
        )
        revisions.forEach((position, shard) => this.restartShard(shard, position))
      }
      this.instance = snapshot.instance
      await Promise.all(revisions.map((revision, shard) => this.reconcile(shard, revision, before[shard]!)))
    } catch (err) {
      this.metrics.pollErrors.inc()
      this.noteStale(err)
      throw err
    }
    if (this.stopped) return
    this.confirmedAt = Math.max(this.confirmedAt, sentAt)
    this.staleLogged = false
    if (!this.everSynced) {
      this.everSynced = true
      this.sink.firstSyncDone()
    }
  }

  private noteStale(err: unknown): void {
    if (this.current || this.staleLogged || !this.everSynced) {
      this.log.debug({ err }, 'revision poll failed')
      return
    }
    this.staleLogged = true
    this.log.warn(
      { err, stalenessMs: this.stalenessMs },
      'cannot confirm the cache is current within the staleness bound',
    )
  }

  private async reconcile(shard: number, position: ShardRevision, appliedBefore: number): Promise<void> {
    if (this.applied[shard]! < 0) {
      this.applied[shard] = position.rev
      this.epochs[shard] = position.epoch
      return
    }
    // A shard that was empty takes the epoch of its first write.
    if (this.epochs[shard] === '') this.epochs[shard] = position.epoch
    if (position.epoch !== this.epochs[shard]) {
      this.log.warn({ shard }, 'shard epoch changed (Redis lost its data); dropping the shard cache')
      this.restartShard(shard, position)
    } else if (position.rev < appliedBefore) {
      this.log.warn(
        { shard, applied: appliedBefore, rev: position.rev },
        'shard revision went backwards; dropping the shard cache',
      )
      this.restartShard(shard, position)
    } else if (position.rev > this.applied[shard]!) {
      await this.catchUp(shard, position.rev)
    }
  }

  /** Nothing cached of the shard can be trusted: drop it and follow the shard's new sequence. */
  private restartShard(shard: number, position: ShardRevision): void {
    this.sink.dropShard(shard)
    this.metrics.cacheDrops.inc()
    this.applied[shard] = position.rev
    this.wanted[shard] = Math.min(this.wanted[shard]!, position.rev)
    this.epochs[shard] = position.epoch
  }

  private onEvent(event: ChangeEvent): void {
    const shard = event.shard
    if (shard < 0 || shard >= SHARD_COUNT) return
    this.metrics.eventsReceived.inc()
    // Whatever else happens, nothing older than this event may stay in the cache.
    this.sink.changed(event)
    // From here on this verifier answers from the store for the key: the change has landed. Clocks of two
    // hosts may disagree; a negative difference is counted as zero rather than dropped.
    if (event.at !== undefined) this.metrics.propagation.observe(Math.max(0, wallMicros() - event.at) / 1e6)
    const applied = this.applied[shard]!
    if (applied < 0) return
    if (this.epochs[shard] === '') this.epochs[shard] = event.epoch
    if (event.epoch !== this.epochs[shard]) {
      this.log.warn({ shard }, 'shard epoch changed (Redis lost its data); dropping the shard cache')
      this.restartShard(shard, event)
      return
    }
    if (event.rev <= applied) return
    if (event.rev === applied + 1 && !this.catchingUp.has(shard)) {
      this.applied[shard] = event.rev
      return
    }
    void this.catchUp(shard, event.rev).catch((err) =>
      this.log.warn({ err, shard }, 'catch-up failed; the next poll retries'),
    )
  }

  /**
   * Replays the shard's log until it has applied `target`; one replay per shard at a time. A caller that
   * joins a replay which ends short of its target (it was started for less) starts another.
   */
  private async catchUp(shard: number, target: number): Promise<void> {
    while (this.applied[shard]! < target) {
      // Raised on every round: a shard restart may have lowered it, and each replay then ends at or past target.
      this.wanted[shard] = Math.max(this.wanted[shard]!, target)
      let run = this.catchingUp.get(shard)
      if (!run) {
        run = this.replay(shard).finally(() => this.catchingUp.delete(shard))
        this.catchingUp.set(shard, run)
      }
      await run
    }
  }

  private async replay(shard: number): Promise<void> {
    this.metrics.catchUps.inc()
    while (this.applied[shard]! < this.wanted[shard]!) {
      const from = this.applied[shard]!
      const changes = await this.store.readChanges(shard, from, CATCH_UP_BATCH)
      // A restart of the shard while we read: its new position stands, this batch is of the old history.
      if (this.applied[shard] !== from) continue
      if (changes === LOG_TRIMMED || changes.length === 0) {
        // Trimmed past our position, or nothing logged where a revision (or an event) says there is: the
        // missing changes cannot be replayed, so nothing cached of the shard can be trusted.
        this.log.warn(
          { shard, from, to: this.wanted[shard] },
          'changes cannot be replayed from the log; dropping the shard cache',
        )
        this.sink.dropShard(shard)
        this.metrics.cacheDrops.inc()
        this.applied[shard] = this.wanted[shard]!
        return
      }
      for (const change of changes) this.sink.changed(change)
      this.applied[shard] = changes[changes.length - 1]!.rev
    }
  }
}

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())
