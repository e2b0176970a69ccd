import { createHash } from 'node:crypto'
import type { ChangeEvent } from '../../../shared/change-event.js'
import type { Clock } from '../../../shared/clock.js'
import { isEntityAddress } from '../../../shared/entity.js'
import { identityAddress, type IdentityRecord } from '../../../shared/identity.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { RootKeyEntity } from '../../../shared/root-keys/root-key-entity.js'
import type { ApiKeyStore } from '../../../shared/store/api-keys/api-key-store.js'
import { snapshotKept, type ChangeSnapshot } from '../../../shared/store/change-snapshots/change-snapshot-store.js'
import type { EntityReader } from '../../../shared/store/entities/entity-store.js'
import type { RootKeyStore } from '../../../shared/store/root-keys/root-key-store.js'
import type { WebhookEvent, WebhookEventType } from '../../../shared/webhook.js'
import { changedNames, identityData, keyData } from './event-payloads.js'
import type { WebhookMetrics } from '../webhook-metrics.js'

export interface ChangeEventsDeps {
  keys: Pick<ApiKeyStore, 'getKeyByHash'>
  entities: EntityReader
  rootKeys: Pick<RootKeyStore, 'getRootKeyById'>
  clock: Clock
  metrics: WebhookMetrics
}

/** What one change makes: its events, and the expiry to schedule of a key it made or whose expiry it changed. */
export interface ChangeOutcome {
  events: WebhookEvent[]
  expiry?: { keyId: string; expires: number }
}

/**
 * What the webhook events of a change say (event-deriver.ts derives them in order): the record as the change wrote it
 * (its snapshot), else as it is now; ids from the change, so that deriving it twice makes the same events.
 */
export class ChangeEvents {
  /**
   * Identities' ids by externalId, as found during one look, for key events without a snapshot (which names the
   * identity of its write). Only ids found are kept: an identity created during the look is found when next asked.
   */
  private identityIds = new Map<string, string>()

  constructor(private readonly deps: ChangeEventsDeps) {}

  /** Forgets the identities' ids found: once per look. */
  forgetIdentities(): void {
    this.identityIds = new Map()
  }

  /**
   * The webhook events one change makes (none for records no event is about), describing the record as the change
   * wrote it: its snapshot. A change whose snapshot is gone (trimmed while no deriver read the shard, or written by a
   * process that kept none) is described as the record is now, a delete by its ids.
   */
  async of(change: ChangeEvent, snapshot: ChangeSnapshot | undefined): Promise<ChangeOutcome> {
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
    if (isEntityAddress(change.hash)) return { events: await this.entityEventsOf(change, snapshot, event) }
    const key = snapshot
      ? keyOf(snapshot)
      : change.kind === 'deleted'
        ? null
        : await this.deps.keys.getKeyByHash(change.hash)
    const data = !key
      ? { keyId: change.keyId, apiId: change.apiId }
      : snapshot
        ? keyData(key, snapshot.identityId)
        : await this.keyData(key)
    if (change.kind === 'deleted') return { events: [event('key.deleted', data)] }
    if (change.kind === 'created') {
      const rerolled = key?.rerolledFrom
      return {
        events: [
          event('key.created', data, key?.createdAt),
          ...(rerolled
            ? [event('key.rerolled', { keyId: rerolled, apiId: change.apiId, newKeyId: change.keyId })]
            : []),
        ],
        ...(key?.expires !== undefined ? { expiry: { keyId: key.id, expires: key.expires } } : {}),
      }
    }
    const fields = change.fields ?? []
    // A leak report's mark is news of its own; what its policy changed beside it (enabled) is an update.
    const updated = fields.filter((field) => field !== 'leaked')
    return {
      events: [
        ...(fields.includes('leaked') ? [event('key.leaked', { ...data, leaked: key?.leaked }, key?.leaked?.at)] : []),
        ...(updated.length > 0
          ? [event('key.updated', { ...data, changed: changedNames(updated) }, key?.updatedAt)]
          : []),
      ],
      ...(key?.expires !== undefined && fields.includes('expires')
        ? { expiry: { keyId: key.id, expires: key.expires } }
        : {}),
    }
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

  /**
   * What an event says of a key as it now is, with its identity named by id and by externalId (the record binds by
   * the latter): the identity its externalId names now.
   */
  async keyData(key: KeyRecord): Promise<Record<string, unknown>> {
    const externalId = key.ownerId
    if (externalId === undefined) return keyData(key, undefined)
    let identityId = this.identityIds.get(externalId)
    if (identityId === undefined) {
      identityId = (await this.deps.entities.getEntity<IdentityRecord>(identityAddress(externalId)))?.doc.id
      if (identityId !== undefined) this.identityIds.set(externalId, identityId)
    }
    return keyData(key, identityId)
  }
}

/** A key record as a change's snapshot holds it: the stored document and the balance beside it. */
function keyOf(snapshot: ChangeSnapshot): KeyRecord {
  const key = snapshot.doc as unknown as KeyRecord
  return snapshot.credits === undefined ? key : { ...key, remaining: snapshot.credits }
}

/** An event's id from what caused it: the same cause, the same id (`msg_` and 24 characters of its SHA-256). */
export function eventId(cause: string): string {
  return `msg_${createHash('sha256').update(cause).digest('base64url').slice(0, 24)}`
}
