import { createHash } from 'node:crypto'
import type { Logger } from 'pino'
import type { ChangeEvent } from '../../shared/change-event.js'
import type { Clock } from '../../shared/clock.js'
import { isEntityAddress } from '../../shared/entity.js'
import { identityAddress, type IdentityRecord } from '../../shared/identity.js'
import type { KeyRecord } from '../../shared/records.js'
import type { RootKeyEntity } from '../../shared/root-key-entity.js'
import { SHARD_COUNT } from '../../shared/shards.js'
import type { ApiKeyStore } from '../../shared/store/api-key-store.js'
import { LOG_TRIMMED, type ChangeLogStore, type ShardRevision } from '../../shared/store/change-log-store.js'
import {
  snapshotKept,
  type ChangeSnapshot,
  type ChangeSnapshotStore,
} from '../../shared/store/change-snapshot-store.js'
import type { EntityReader } from '../../shared/store/entity-store.js'
import type { RootKeyStore } from '../../shared/store/root-key-store.js'
import type { WebhookStore } from '../../shared/store/webhook-store.js'
import type { WebhookEndpoint, WebhookEvent, WebhookEventType } from '../../shared/webhook.js'
import { endpointWants } from './endpoint-wants.js'
import { changedNames, identityData, keyData } from './event-payloads.js'
import { placeMissingCursors } from './webhook-cursors.js'
import type { WebhookMetrics } from './webhook-metrics.js'
import type { WebhookPolicy } from './webhook-policy.js'

/** The lease that makes one control plane at a time the deriver; another takes over this long after it dies. */
export const DERIVER_LEASE = 'deriver'
export const DERIVER_LEASE_MS = 5_000
/** How long a deadline being fired is kept from other looks; one whose event was not queued by then fires again. */
export const DEADLINE_LEASE_MS = 30_000
/** How often the deriver looks at the shards' revisions, ms: the part of an event's delay spent waiting. */
const POLL_MS = 200
/** Changes read from one shard's log per look. */
const BATCH = 200
/** Deadlines fired per look. */
const DEADLINES = 100
/** How often events past retention are forgotten, ms. */
const PRUNE_EVERY_MS = 60_000
/** How often the shards' credit notices are read, ms (64 reads, one per shard). */
const NOTICES_EVERY_MS = 400

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
}

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
 * A shard without a cursor gets one where it stands (webhook-cursors.ts): events start with the first endpoint.
 */
export class EventDeriver {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = true
  private prunedAt = 0
  private noticesReadAt = 0
  /** When this process last took or renewed the lease (before asking), by `clock`. */
  private heldAt = Number.NEGATIVE_INFINITY
  /**
   * Endpoints, read when an event needs them after the changes it comes from were read: every endpoint created before
   * a change was written is then in it (one read before could miss an endpoint created meanwhile). Forgotten after
   * each read of changes, notices or deadlines.
   */
  private endpoints: WebhookEndpoint[] | undefined
  /**
   * Identities' ids by externalId, as found during one look, for key events without a snapshot (which names the
   * identity of its write). Only ids found are kept: an identity created during the look is found when next asked.
   */
  private identityIds = new Map<string, string>()

  constructor(private readonly deps: EventDeriverDeps) {}

  start(): void {
    this.stopped = false
    this.schedule()
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
   * One look: if this process holds the lease, derive what the logs hold past the cursors and fire due deadlines. A
   * look that outlasts a third of the lease renews it before its next step, and stops there if another process has
   * taken it meanwhile: two derivers overlap by one step at most.
   */
  async runOnce(): Promise<void> {
    const { webhooks, changes, clock } = this.deps
    if (!(await this.holdLease())) {
      this.deps.metrics.behind(0)
      return
    }
    this.endpoints = undefined
    this.identityIds = new Map()
    let [snapshot, cursors] = await Promise.all([changes.readRevisions(), webhooks.readCursors()])
    if (cursors.size < SHARD_COUNT) {
      await placeMissingCursors(changes, webhooks)
      ;[snapshot, cursors] = await Promise.all([changes.readRevisions(), webhooks.readCursors()])
    }
    let behind = 0
    for (const [shard, cursor] of cursors) {
      const head = snapshot.shards[shard]
      // A cursor placed before the shard's first write has no epoch yet.
      if (head && (cursor.epoch === '' || head.epoch === cursor.epoch)) behind += Math.max(0, head.rev - cursor.rev)
    }
    this.deps.metrics.behind(behind)
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      if (!(await this.stillHolding())) return
      const head = snapshot.shards[shard]!
      const cursor = cursors.get(shard)
      if (!cursor) {
        continue
      } else if (cursor.epoch !== '' && cursor.epoch !== head.epoch) {
        // Redis lost the shard's data (restart without persistence, failover to an empty replica): its old revisions
        // mean nothing now. Carry on from where it stands.
        this.deps.metrics.skipped('epoch')
        this.deps.log.warn({ shard }, 'a change log was reset: webhook events in between are not sent')
        await this.skipTo(shard, head)
      } else if (head.rev < cursor.rev) {
        // The shard went back with its epoch kept (a failover to a replica that missed the last writes): the
        // revisions past its head will be written again, by other changes, which must not be taken as seen.
        this.deps.metrics.skipped('rollback')
        this.deps.log.warn({ shard }, 'a change log went back: webhook events of the lost writes are not sent')
        await this.skipTo(shard, head)
      } else if (head.rev > cursor.rev) {
        await this.deriveShard(shard, cursor.rev, head.epoch)
      }
    }
    if (!(await this.stillHolding())) return
    if (clock.now() - this.noticesReadAt >= NOTICES_EVERY_MS) {
      this.noticesReadAt = clock.now()
      await this.deriveCreditNotices()
    }
    if (!(await this.stillHolding())) return
    await this.fireDeadlines(clock.now())
    if (clock.now() - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = clock.now()
      await webhooks.pruneEvents(clock.now() - this.deps.policy.retryWindowMs - 24 * 3_600_000)
    }
  }

  private async holdLease(): Promise<boolean> {
    const asked = this.deps.clock.now()
    const held = await this.deps.webhooks.holdLease(DERIVER_LEASE, this.deps.holder, DERIVER_LEASE_MS)
    this.heldAt = held ? asked : Number.NEGATIVE_INFINITY
    return held
  }

  /** Whether the lease is still this process's: renewed (or found lost) once a third of it has passed. */
  private async stillHolding(): Promise<boolean> {
    return this.deps.clock.now() - this.heldAt < DERIVER_LEASE_MS / 3 || this.holdLease()
  }

  private schedule(): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.running = this.runOnce()
        .catch((err: unknown) => this.deps.log.warn({ err }, 'webhook events could not be derived'))
        .then(() => this.schedule())
    }, POLL_MS)
    this.timer.unref()
  }

  private async deriveShard(shard: number, afterRev: number, epoch: string): Promise<void> {
    const { webhooks, changes, snapshots } = this.deps
    const read = await changes.readChanges(shard, afterRev, BATCH)
    this.endpoints = undefined
    if (read === LOG_TRIMMED) {
      this.deps.metrics.skipped('trimmed')
      this.deps.log.warn({ shard, afterRev }, 'a change log was trimmed past the webhooks cursor: events lost')
      const { shards } = await changes.readRevisions()
      await this.skipTo(shard, shards[shard]!)
      return
    }
    const last = read.at(-1)
    if (!last) return
    // Read after the changes: every change read has its snapshot written by then (the same atomic step).
    const written = await snapshots.readSnapshots(shard, afterRev, last.rev)
    for (const change of read) {
      const snapshot = written.get(change.rev)
      // A snapshot of another record is one a lost sequence left at this revision: not this change's.
      const own = snapshot?.doc.id === change.keyId ? snapshot : undefined
      for (const event of await this.eventsOf(change, own)) await this.enqueue(event)
    }
    await webhooks.writeCursor(shard, { epoch, rev: last.rev })
    await snapshots.forgetSnapshots(shard, last.rev)
  }

  /** Moves the shard's cursor past changes that will not be derived, and forgets their snapshots. */
  private async skipTo(shard: number, position: ShardRevision): Promise<void> {
    await this.deps.webhooks.writeCursor(shard, position)
    await this.deps.snapshots.forgetSnapshots(shard, position.rev)
  }

  /** `key.credits.low` and `key.credits.exhausted` from each shard's credit notices past its notice cursor. */
  private async deriveCreditNotices(): Promise<void> {
    const { webhooks, changes } = this.deps
    let cursors = await webhooks.readNoticeCursors()
    if (cursors.size < SHARD_COUNT) {
      await placeMissingCursors(changes, webhooks)
      cursors = await webhooks.readNoticeCursors()
    }
    const reads = await Promise.all(
      Array.from({ length: SHARD_COUNT }, (_, shard) =>
        changes.readCreditNotices(shard, cursors.get(shard) ?? '', BATCH),
      ),
    )
    this.endpoints = undefined
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const read = reads[shard]!
      if (read === LOG_TRIMMED) {
        this.deps.metrics.skipped('trimmed')
        this.deps.log.warn({ shard }, 'credit notices were trimmed past the webhooks cursor: events lost')
        await webhooks.writeNoticeCursor(shard, (await changes.lastCreditNoticeIds())[shard]!)
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
      if (last) await webhooks.writeNoticeCursor(shard, last.id)
    }
  }

  /**
   * The webhook events one change makes (none for records no event is about), describing the record as the change
   * wrote it: its snapshot. A change whose snapshot is gone (trimmed while no deriver read the shard, or written by a
   * process that kept none) is described as the record is now, a delete by its ids.
   */
  private async eventsOf(change: ChangeEvent, snapshot: ChangeSnapshot | undefined): Promise<WebhookEvent[]> {
    // The record is part of the id: should revisions ever be reused (a rollback), another change gets another id.
    const id = (type: WebhookEventType) =>
      eventId(`${change.shard}|${change.epoch}|${change.rev}|${change.hash}|${type}`)
    const now = this.deps.clock.now()
    const event = (type: WebhookEventType, data: Record<string, unknown>, at = now): WebhookEvent => ({
      id: id(type),
      type,
      at,
      data,
    })
    if (!snapshot && snapshotKept(change.hash)) this.deps.metrics.describedLate()
    if (isEntityAddress(change.hash)) return this.entityEventsOf(change, snapshot, event)
    const key = snapshot
      ? keyOf(snapshot)
      : change.kind === 'deleted'
        ? null
        : await this.deps.keys.getKeyByHash(change.hash)
    const data = !key
      ? { keyId: change.keyId, apiId: change.apiId }
      : snapshot
        ? keyData(key, snapshot.identityId)
        : await this.keyEventData(key)
    if (change.kind === 'deleted') return [event('key.deleted', data)]
    if (change.kind === 'created') {
      if (key?.expires !== undefined) await this.scheduleExpiry(key.id, key.expires)
      const rerolled = key?.rerolledFrom
      return [
        event('key.created', data, key?.createdAt),
        ...(rerolled ? [event('key.rerolled', { keyId: rerolled, apiId: change.apiId, newKeyId: change.keyId })] : []),
      ]
    }
    const fields = change.fields ?? []
    if (key?.expires !== undefined && fields.includes('expires')) await this.scheduleExpiry(key.id, key.expires)
    // A leak report's mark is news of its own; what its policy changed beside it (enabled) is an update.
    const updated = fields.filter((field) => field !== 'leaked')
    return [
      ...(fields.includes('leaked') ? [event('key.leaked', { ...data, leaked: key?.leaked }, key?.leaked?.at)] : []),
      ...(updated.length > 0
        ? [event('key.updated', { ...data, changed: changedNames(updated) }, key?.updatedAt)]
        : []),
    ]
  }

  private async entityEventsOf(
    change: ChangeEvent,
    snapshot: ChangeSnapshot | undefined,
    event: (type: WebhookEventType, data: Record<string, unknown>) => WebhookEvent,
  ): Promise<WebhookEvent[]> {
    const type = change.hash.slice(0, change.hash.indexOf(':'))
    if (type === 'identity') {
      const identity = snapshot
        ? (snapshot.doc as unknown as IdentityRecord)
        : change.kind === 'deleted'
          ? null
          : (await this.deps.entities.getEntity<IdentityRecord>(change.hash))?.doc
      const data = identity ? identityData(identity) : { identityId: change.keyId }
      const kinds = { created: 'identity.created', updated: 'identity.updated', deleted: 'identity.deleted' } as const
      return [event(kinds[change.kind], data)]
    }
    if (type === 'rootkey') return this.rootKeyEventsOf(change, snapshot, event)
    return []
  }

  /**
   * A root key's entity as the change wrote it (its snapshot), else as it is now, which may be past the change
   * derived: a root key created and revoked before a look is then a tombstone when its create is derived. So the
   * create is told from the change's kind (created, with what a tombstone no longer says left out), and a revoke has
   * one id per root key, whichever change finds it (a tombstone is final): the create's and the revoke's changes
   * report it once.
   */
  private async rootKeyEventsOf(
    change: ChangeEvent,
    snapshot: ChangeSnapshot | undefined,
    event: (type: WebhookEventType, data: Record<string, unknown>) => WebhookEvent,
  ): Promise<WebhookEvent[]> {
    const stored = snapshot
      ? { doc: snapshot.doc as unknown as RootKeyEntity, rev: change.rev }
      : await this.deps.entities.getEntity<RootKeyEntity>(change.hash)
    // The bootstrap switch is no root key (its address names none).
    if (!stored || !('id' in stored.doc)) return []
    const { doc } = stored
    const rootKeyId = doc.id
    const revoked = 'revoked' in doc
    const events: WebhookEvent[] = []
    // A tombstone written where nothing was (a root key never published) is a revoke, not a create.
    if (change.kind === 'created' && !(revoked && change.rev === stored.rev)) {
      events.push(
        event('rootKey.created', 'revoked' in doc ? { rootKeyId } : { rootKeyId, permissions: doc.permissions }),
      )
      // A roll is a create (and a revoke of the old one): the stored record says which it replaced.
      const rolledFrom = (await this.deps.rootKeys.getRootKeyById(rootKeyId))?.rolledFrom
      if (rolledFrom) events.push(event('rootKey.rolled', { rootKeyId: rolledFrom, newRootKeyId: rootKeyId }))
    }
    if (revoked)
      events.push({ ...event('rootKey.revoked', { rootKeyId }), id: eventId(`rootKey.revoked|${rootKeyId}`) })
    return events
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
   * and forgotten only once its event is queued: a look that fails before that leaves it to fire after its lease.
   */
  private async fireDeadlines(now: number): Promise<void> {
    const { webhooks, keys } = this.deps
    const claimed = await webhooks.claimDeadlines(now, DEADLINE_LEASE_MS, DEADLINES)
    this.endpoints = undefined
    for (const member of claimed) {
      const [type, keyId, expires] = member.split('|') as ['key.expiring' | 'key.expired', string, string]
      const key = await keys.getKeyById(keyId)
      if (key && key.expires === Number(expires))
        await this.enqueue({ id: eventId(member), type, at: now, data: await this.keyEventData(key) })
      await webhooks.unschedule(member)
    }
  }

  /**
   * What an event says of a key as it now is, with its identity named by id and by externalId (the record binds by
   * the latter): the identity its externalId names now.
   */
  private async keyEventData(key: KeyRecord): Promise<Record<string, unknown>> {
    const externalId = key.ownerId
    if (externalId === undefined) return keyData(key, undefined)
    let identityId = this.identityIds.get(externalId)
    if (identityId === undefined) {
      identityId = (await this.deps.entities.getEntity<IdentityRecord>(identityAddress(externalId)))?.doc.id
      if (identityId !== undefined) this.identityIds.set(externalId, identityId)
    }
    return keyData(key, identityId)
  }

  private async enqueue(event: WebhookEvent): Promise<void> {
    this.deps.metrics.derived(event.type)
    this.endpoints ??= await this.deps.webhooks.listEndpoints()
    const wanting = this.endpoints.filter((endpoint) => endpointWants(endpoint, event)).map((endpoint) => endpoint.id)
    if (wanting.length > 0) await this.deps.webhooks.enqueue(event, wanting, this.deps.clock.now())
  }
}

/** A key record as a change's snapshot holds it: the stored document and the balance beside it. */
function keyOf(snapshot: ChangeSnapshot): KeyRecord {
  const key = snapshot.doc as unknown as KeyRecord
  return snapshot.credits === undefined ? key : { ...key, remaining: snapshot.credits }
}

/** An event's id from what caused it: the same cause, the same id (`msg_` and 24 characters of its SHA-256). */
function eventId(cause: string): string {
  return `msg_${createHash('sha256').update(cause).digest('base64url').slice(0, 24)}`
}
