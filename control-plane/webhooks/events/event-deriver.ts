import type { Logger } from 'pino'
import type { ChangeEvent } from '../../../shared/change-event.js'
import type { ChangeFeedTap } from '../../../shared/feed/tapped-change-feed.js'
import { monotonicClock, type Clock } from '../../../shared/clock.js'
import { SHARD_COUNT } from '../../../shared/shards.js'
import type { ApiKeyStore } from '../../../shared/store/api-keys/api-key-store.js'
import {
  LOG_TRIMMED,
  type ChangeLogStore,
  type ShardRevision,
} from '../../../shared/store/change-log/change-log-store.js'
import type { ChangeSnapshotStore } from '../../../shared/store/change-snapshots/change-snapshot-store.js'
import type { EntityReader } from '../../../shared/store/entities/entity-store.js'
import type { RootKeyStore } from '../../../shared/store/root-keys/root-key-store.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'
import type { WebhookEndpoint, WebhookEvent } from '../../../shared/webhook.js'
import { changesBehind, cursorStanding } from './cursor-standing.js'
import { endpointWants } from '../endpoints/endpoint-wants.js'
import { ChangeEvents, eventId } from './change-events.js'
import { placeMissingCursors } from './webhook-cursors.js'
import type { WebhookMetrics } from '../webhook-metrics.js'
import type { WebhookPolicy } from '../webhook-policy.js'

/** The lease that makes one control plane at a time the deriver; another takes over this long after it dies. */
export const DERIVER_LEASE = 'deriver'
export const DERIVER_LEASE_MS = 5_000
/** Changes read from one shard's log per look. */
export const BATCH = 200
/** How long a deadline being fired is kept from other looks; one whose event was not queued by then fires again. */
export const DEADLINE_LEASE_MS = 30_000
/**
 * How often the lease holder looks at every shard's revision, ms. A published change wakes it at once (changed()):
 * this look is the repair path, for a change whose message was lost (pub/sub delivers at most once), a deriver that
 * just took the lease, and a backlog.
 */
const FULL_LOOK_EVERY_MS = 5_000
/** How soon after a published change its shard is derived, ms: a burst of changes is derived in one look. */
const HINT_DELAY_MS = 5
/** How often a process without the lease asks for it, ms: a dead deriver is replaced within its lease and this. */
const LEASE_ASK_EVERY_MS = 1_000
/** After a look that failed (the store unreachable), the next one, ms. */
const RETRY_MS = 1_000
/** Deadlines fired per look. */
const DEADLINES = 100
/** How often due deadlines are fired, ms. */
const DEADLINES_EVERY_MS = 1_000
/** How often events past retention are forgotten, ms. */
const PRUNE_EVERY_MS = 60_000
/**
 * How often every shard's credit notices are read, ms (64 reads, one per shard). A notice logged is published as a
 * hint (noticed()), which reads its shard's at once: this read is the repair path, for a hint lost.
 */
const NOTICES_EVERY_MS = 10_000

export interface EventDeriverDeps {
  changes: ChangeLogStore
  snapshots: ChangeSnapshotStore
  keys: Pick<ApiKeyStore, 'getKeyByHash' | 'getKeyById'>
  entities: EntityReader
  rootKeys: Pick<RootKeyStore, 'getRootKeyById'>
  webhooks: WebhookStore
  policy: WebhookPolicy
  clock: Clock
  log: Logger
  metrics: WebhookMetrics
  /** Who this process is, for the lease. */
  holder: string
  /** Told after a look that queued deliveries, so that this process's worker claims them at once. */
  onQueued?: () => void
}

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, shard) => shard)

/** A deadline's member in the schedule: the event type, the key and the expiry it is about. */
const deadline = (type: 'key.expiring' | 'key.expired', keyId: string, expires: number) => `${type}|${keyId}|${expires}`

/**
 * Turns changes into webhook events. The shards' change logs are the source: every write that matters is in one, in
 * the same atomic step as the write itself, so deriving from a persisted position per shard (the cursor, advanced only
 * after the shard's events are queued) loses nothing a crash could otherwise drop between a write and a separate
 * "send an event" step. An event's id comes from the change it reports (shard, epoch, revision, type), so deriving a
 * change twice — a crash before the cursor moved, two derivers during a lease hand-over — queues nothing twice.
 *
 * One control plane at a time derives (a lease in the store); the others wait to take over. It also fires the
 * scheduled events (`key.expiring`, `key.expired`): each deadline is claimed from the schedule by one deriver at a time
 * and forgotten once its event is queued.
 *
 * It derives when told of a change (changed(), from the change feed the process subscribes to anyway), and looks at
 * every shard only every FULL_LOOK_EVERY_MS: an idle control plane costs the store a few commands a second.
 *
 * A shard without a cursor gets one where it stands (webhook-cursors.ts): events start with the first endpoint.
 */
export class EventDeriver {
  private timer: NodeJS.Timeout | undefined
  /** When the timer fires, by monotonicClock. */
  private timerAt = Number.POSITIVE_INFINITY
  private running: Promise<void> | undefined
  private stopped = true
  /** When this process last took or renewed the lease (before asking), by `clock`. */
  private heldAt = Number.NEGATIVE_INFINITY
  /**
   * The scheduler's state, by monotonicClock (timers run in real time, whatever `clock` says): whether the last ask
   * found the lease this process's, and when each kind of step was last done.
   */
  private holding = false
  private askedAt = Number.NEGATIVE_INFINITY
  private lookedAt = Number.NEGATIVE_INFINITY
  private noticesReadAt = Number.NEGATIVE_INFINITY
  private deadlinesAt = Number.NEGATIVE_INFINITY
  private prunedAt = Number.NEGATIVE_INFINITY
  /**
   * A full look is wanted at once: the lease just taken, a feed (re)subscribed, a backlog, a failed look, a hinted
   * shard without a cursor.
   */
  private resync = true
  /** Shards published changes were heard of since the last look (or left with more to read by the last one). */
  private readonly hints = new Set<number>()
  /** Shards a credit notice was heard of since their notices were last read. */
  private readonly noticeHints = new Set<number>()
  /**
   * Endpoints, read when an event needs them after the changes it comes from were read: every endpoint created before
   * a change was written is then in it (one read before could miss an endpoint created meanwhile). Forgotten after
   * each read of changes, notices or deadlines.
   */
  private endpoints: WebhookEndpoint[] | undefined
  private readonly changeEvents: ChangeEvents

  /** What it hears of the change feed the process follows anyway (tapChangeFeed): changes, notices, resubscribes. */
  readonly tap: ChangeFeedTap = {
    onEvent: (change) => this.changed(change),
    onCreditNotice: (shard) => this.noticed(shard),
    onSubscribed: () => this.resubscribed(),
  }

  constructor(private readonly deps: EventDeriverDeps) {
    this.changeEvents = new ChangeEvents(deps)
  }

  start(): void {
    this.stopped = false
    this.wake(0)
  }

  /** Stops deriving, and gives the lease up so that another control plane derives at once (a rolling restart). */
  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
    await this.deps.webhooks
      .releaseLease(DERIVER_LEASE, this.deps.holder)
      .catch((err: unknown) => this.deps.log.warn({ err }, 'the webhook deriver lease could not be given up'))
  }

  /**
   * A change was published (the change feed): its shard is looked at at once if this process holds the lease, judged
   * against its head as the full look judges every shard. A hint only: a lost one is made good by the next full look.
   */
  changed(change: Pick<ChangeEvent, 'shard'>): void {
    if (this.stopped || !this.holding) return
    this.hints.add(change.shard)
    this.wake(HINT_DELAY_MS)
  }

  /** A credit notice was logged in the shard (the change feed): its notices are read at once, as changed() does. */
  noticed(shard: number): void {
    if (this.stopped || !this.holding) return
    this.noticeHints.add(shard)
    this.wake(HINT_DELAY_MS)
  }

  /** The change feed (re)subscribed: what was published while it was down was lost, so look at every shard. */
  resubscribed(): void {
    this.resync = true
    this.noticeHints.clear()
    this.noticesReadAt = Number.NEGATIVE_INFINITY
    this.wake(HINT_DELAY_MS)
  }

  /**
   * One full look: if this process holds the lease, derive what the logs hold past the cursors, read the credit
   * notices and fire due deadlines. A look that outlasts a third of the lease renews it before its next step, and
   * stops there if another process has taken it meanwhile: two derivers overlap by one step at most.
   */
  async runOnce(): Promise<void> {
    if (!(await this.holdLease())) {
      this.deps.metrics.behind(0)
      return
    }
    await this.deriveAll()
    if (!(await this.stillHolding())) return
    await this.deriveCreditNotices()
    if (!(await this.stillHolding())) return
    await this.fireDeadlines(this.deps.clock.now())
    await this.prune()
  }

  /** Every shard past its cursor; how many changes it read, and whether a shard has more than it read. */
  private async deriveAll(): Promise<{ read: number; more: boolean }> {
    const { webhooks, changes } = this.deps
    this.endpoints = undefined
    this.changeEvents.forgetIdentities()
    let [snapshot, cursors] = await Promise.all([changes.readRevisions(), webhooks.readCursors()])
    if (cursors.size < SHARD_COUNT) {
      await placeMissingCursors(changes, webhooks)
      ;[snapshot, cursors] = await Promise.all([changes.readRevisions(), webhooks.readCursors()])
    }
    let behind = 0
    for (const [shard, cursor] of cursors) behind += changesBehind(cursor, snapshot.shards[shard]!)
    this.deps.metrics.behind(behind)
    const derived = { read: 0, more: false }
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      if (!(await this.stillHolding())) return derived
      const cursor = cursors.get(shard)
      if (!cursor) continue
      const read = await this.catchUp(shard, cursor, snapshot.shards[shard]!)
      derived.read += read
      derived.more ||= read === BATCH
    }
    return derived
  }

  /**
   * The shards published changes were heard of, each judged against its head as the full look judges every shard
   * (the message only says which shard to look at: it may come after the look that derived its change, or from before
   * the shard's log was reset). A shard without a cursor is the full look's to place. How many changes it read.
   */
  private async deriveHinted(): Promise<number> {
    const { webhooks, changes } = this.deps
    const shards = [...this.hints]
    this.hints.clear()
    const [cursors, heads] = await Promise.all([
      webhooks.readCursors(),
      Promise.all(shards.map((shard) => changes.readRevision(shard))),
    ])
    this.endpoints = undefined
    this.changeEvents.forgetIdentities()
    let read = 0
    for (const [i, shard] of shards.entries()) {
      if (!(await this.stillHolding())) return read
      const cursor = cursors.get(shard)
      if (!cursor) {
        this.resync = true
        continue
      }
      const derived = await this.catchUp(shard, cursor, heads[i]!)
      // More than one batch behind: the rest in a look at once, not at the next full one.
      if (derived === BATCH) this.hints.add(shard)
      read += derived
    }
    return read
  }

  /**
   * Brings the shard's cursor towards `head`: derives a batch of the changes past it, or, where the log was reset or
   * went back (cursor-standing.ts), moves it to the head, its events in between not sent. How many changes it read.
   */
  private async catchUp(shard: number, cursor: ShardRevision, head: ShardRevision): Promise<number> {
    const standing = cursorStanding(cursor, head)
    if (standing === 'behind') return this.deriveShard(shard, cursor, head.epoch)
    if (standing === 'reset') {
      this.deps.metrics.skipped('epoch')
      this.deps.log.warn({ shard }, 'a change log was reset: webhook events in between are not sent')
      await this.skipTo(shard, cursor, head)
    } else if (standing === 'back') {
      this.deps.metrics.skipped('rollback')
      this.deps.log.warn({ shard }, 'a change log went back: webhook events of the lost writes are not sent')
      await this.skipTo(shard, cursor, head)
    }
    return 0
  }

  private async prune(): Promise<void> {
    const { webhooks, clock, policy } = this.deps
    await webhooks.pruneEvents(clock.now() - policy.retryWindowMs - 24 * 3_600_000)
  }

  private async holdLease(): Promise<boolean> {
    const asked = this.deps.clock.now()
    this.askedAt = monotonicClock.now()
    const held = await this.deps.webhooks.holdLease(DERIVER_LEASE, this.deps.holder, DERIVER_LEASE_MS)
    this.heldAt = held ? asked : Number.NEGATIVE_INFINITY
    // Just taken: what the last holder left, and what was published meanwhile, is found by a full look.
    if (held && !this.holding) {
      this.resync = true
      this.noticesReadAt = Number.NEGATIVE_INFINITY
    }
    this.holding = held
    return held
  }

  /** Whether the lease is still this process's: renewed (or found lost) once a third of it has passed. */
  private async stillHolding(): Promise<boolean> {
    return this.deps.clock.now() - this.heldAt < DERIVER_LEASE_MS / 3 || this.holdLease()
  }

  /** Runs the next look within `delayMs`, unless one is due sooner (or running: it looks again if anything is left). */
  private wake(delayMs: number): void {
    if (this.stopped || this.running) return
    const at = monotonicClock.now() + delayMs
    if (at >= this.timerAt) return
    clearTimeout(this.timer)
    this.timerAt = at
    this.timer = setTimeout(() => {
      this.timerAt = Number.POSITIVE_INFINITY
      this.running = this.look()
        .catch((err: unknown) => {
          this.deps.log.warn({ err }, 'webhook events could not be derived')
          // What the look took of its hints, or was reading, is read again at the retry: every shard's changes and
          // notices (a notice's hint, once taken, is not heard again).
          this.resync = true
          this.noticesReadAt = Number.NEGATIVE_INFINITY
          return RETRY_MS
        })
        .then((nextMs) => {
          this.running = undefined
          this.wake(nextMs)
        })
    }, delayMs)
    this.timer.unref()
  }

  /**
   * One scheduled look: the lease when a third of it has passed (or, without it, every LEASE_ASK_EVERY_MS), then
   * what is due of the full look, the hinted shards, the credit notices, the deadlines and the pruning. How long until
   * the next one, ms. Between them the deriver costs the store nothing.
   */
  private async look(): Promise<number> {
    const now = monotonicClock.now()
    const since = (at: number) => now - at
    if (since(this.askedAt) >= (this.holding ? DERIVER_LEASE_MS / 3 : LEASE_ASK_EVERY_MS)) await this.holdLease()
    if (!this.holding) {
      this.hints.clear()
      this.noticeHints.clear()
      this.deps.metrics.behind(0)
      return LEASE_ASK_EVERY_MS
    }
    let queued = 0
    if (this.resync || since(this.lookedAt) >= FULL_LOOK_EVERY_MS) {
      this.resync = false
      this.lookedAt = now
      this.hints.clear()
      const { read, more } = await this.deriveAll()
      queued += read
      this.resync ||= more
    } else if (this.hints.size > 0) {
      queued += await this.deriveHinted()
    }
    if (since(this.noticesReadAt) >= NOTICES_EVERY_MS && (await this.stillHolding())) {
      this.noticesReadAt = now
      this.noticeHints.clear()
      queued += await this.deriveCreditNotices()
    } else if (this.noticeHints.size > 0 && (await this.stillHolding())) {
      const shards = [...this.noticeHints]
      this.noticeHints.clear()
      queued += await this.deriveCreditNotices(shards)
    }
    if (since(this.deadlinesAt) >= DEADLINES_EVERY_MS && (await this.stillHolding())) {
      this.deadlinesAt = now
      queued += await this.fireDeadlines(this.deps.clock.now())
    }
    if (since(this.prunedAt) >= PRUNE_EVERY_MS) {
      this.prunedAt = now
      await this.prune()
    }
    if (queued > 0) this.deps.onQueued?.()
    if (this.resync || this.hints.size > 0 || this.noticeHints.size > 0) return 0
    const next = Math.min(
      this.askedAt + DERIVER_LEASE_MS / 3,
      this.lookedAt + FULL_LOOK_EVERY_MS,
      this.noticesReadAt + NOTICES_EVERY_MS,
      this.deadlinesAt + DEADLINES_EVERY_MS,
    )
    return Math.max(0, next - monotonicClock.now())
  }

  /**
   * The shard's changes past `cursor`, a batch at most; how many it read. The cursor moves only from where it was read:
   * another deriver that moved it meanwhile (this look outlasted its lease) keeps it, and the snapshots it has yet to
   * read.
   */
  private async deriveShard(shard: number, cursor: ShardRevision, epoch: string): Promise<number> {
    const { webhooks, changes, snapshots } = this.deps
    const afterRev = cursor.rev
    const read = await changes.readChanges(shard, afterRev, BATCH)
    this.endpoints = undefined
    if (read === LOG_TRIMMED) {
      this.deps.metrics.skipped('trimmed')
      this.deps.log.warn({ shard, afterRev }, 'a change log was trimmed past the webhooks cursor: events lost')
      const { shards } = await changes.readRevisions()
      await this.skipTo(shard, cursor, shards[shard]!)
      return 0
    }
    const last = read.at(-1)
    if (!last) return 0
    // Read after the changes: every change read has its snapshot written by then (the same atomic step).
    const written = await snapshots.readSnapshots(shard, afterRev, last.rev)
    for (const change of read) {
      const snapshot = written.get(change.rev)
      // A snapshot of another record is one a lost sequence left at this revision: not this change's.
      const own = snapshot?.doc.id === change.keyId ? snapshot : undefined
      const { events, expiry } = await this.changeEvents.of(change, own)
      if (expiry) await this.scheduleExpiry(expiry.keyId, expiry.expires)
      for (const event of events) await this.enqueue(event)
    }
    if (await webhooks.moveCursor(shard, cursor, { epoch, rev: last.rev }))
      await snapshots.forgetSnapshots(shard, last.rev)
    return read.length
  }

  /**
   * Moves the shard's cursor from `cursor` past changes that will not be derived, and forgets their snapshots (unless
   * another deriver moved it meanwhile).
   */
  private async skipTo(shard: number, cursor: ShardRevision, position: ShardRevision): Promise<void> {
    if (await this.deps.webhooks.moveCursor(shard, cursor, position))
      await this.deps.snapshots.forgetSnapshots(shard, position.rev)
  }

  /**
   * `key.credits.low` and `key.credits.exhausted` from each shard's credit notices past its notice cursor (of `shards`
   * only, when given); how many notices it read. A cursor moves only from where it was read, as deriveShard's.
   */
  private async deriveCreditNotices(shards: readonly number[] = ALL_SHARDS): Promise<number> {
    const { webhooks, changes } = this.deps
    let cursors = await webhooks.readNoticeCursors()
    if (cursors.size < SHARD_COUNT) {
      await placeMissingCursors(changes, webhooks)
      cursors = await webhooks.readNoticeCursors()
    }
    const reads = await Promise.all(
      shards.map((shard) => changes.readCreditNotices(shard, cursors.get(shard) ?? '', BATCH)),
    )
    this.endpoints = undefined
    let notices = 0
    for (const [i, shard] of shards.entries()) {
      const read = reads[i]!
      const from = cursors.get(shard) ?? ''
      if (read === LOG_TRIMMED) {
        this.deps.metrics.skipped('trimmed')
        this.deps.log.warn({ shard }, 'credit notices were trimmed past the webhooks cursor: events lost')
        await webhooks.moveNoticeCursor(shard, from, (await changes.lastCreditNoticeIds())[shard]!)
        continue
      }
      for (const notice of read) {
        const type = notice.kind === 'low' ? 'key.credits.low' : 'key.credits.exhausted'
        await this.enqueue({
          id: eventId(`credits|${shard}|${notice.id}|${notice.keyId}|${type}`),
          type,
          at: Number(notice.id.split('-')[0]),
          data: {
            keyId: notice.keyId,
            apiId: notice.apiId,
            remaining: notice.remaining,
            ...(notice.threshold !== undefined ? { threshold: notice.threshold } : {}),
          },
        })
      }
      const last = read.at(-1)
      const moved = last !== undefined && (await webhooks.moveNoticeCursor(shard, from, last.id))
      notices += read.length
      // More than one batch: the rest at the next look.
      if (moved && read.length === BATCH) this.noticeHints.add(shard)
    }
    return notices
  }

  /** `key.expiring` the lead time before `expires` (now, if that has passed), and `key.expired` at `expires`. */
  private async scheduleExpiry(keyId: string, expires: number): Promise<void> {
    const now = this.deps.clock.now()
    if (expires <= now) return
    const { webhooks, policy } = this.deps
    await webhooks.schedule(deadline('key.expiring', keyId, expires), Math.max(now, expires - policy.expiringLeadMs))
    await webhooks.schedule(deadline('key.expired', keyId, expires), expires)
  }

  /**
   * Deadlines due: each sent only if the key still expires then (a changed expiry scheduled a deadline of its own),
   * and forgotten only once its event is queued: a look that fails before that leaves it to fire after its lease. How
   * many it claimed.
   */
  private async fireDeadlines(now: number): Promise<number> {
    const { webhooks, keys } = this.deps
    const claimed = await webhooks.claimDeadlines(now, DEADLINE_LEASE_MS, DEADLINES)
    this.endpoints = undefined
    for (const member of claimed) {
      const [type, keyId, expires] = member.split('|') as ['key.expiring' | 'key.expired', string, string]
      const key = await keys.getKeyById(keyId)
      if (key && key.expires === Number(expires))
        await this.enqueue({ id: eventId(member), type, at: now, data: await this.changeEvents.keyData(key) })
      await webhooks.unschedule(member)
    }
    return claimed.length
  }

  /** Queues the event to the endpoints that want it, made now (a replay goes by that, not by when it happened). */
  private async enqueue(event: WebhookEvent): Promise<void> {
    this.deps.metrics.derived(event.type)
    this.endpoints ??= await this.deps.webhooks.listEndpoints()
    const wanting = this.endpoints.filter((endpoint) => endpointWants(endpoint, event)).map((endpoint) => endpoint.id)
    const now = this.deps.clock.now()
    if (wanting.length > 0) await this.deps.webhooks.enqueue({ ...event, madeAt: now }, wanting, now)
  }
}
