import type { Clock } from '../../shared/clock.js'
import { ApiError, WriteConflictError, notFound } from '../../shared/errors/errors.js'
import {
  IDENTITY_ID_SCOPE,
  IDENTITY_INDEX,
  identityAddress,
  type IdentityRecord,
  type NamedRateLimit,
} from '../../shared/identity.js'
import { newId } from '../../shared/ids.js'
import type { StoredEntity } from '../../shared/entity.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from '../index-page.js'
import type { WriteListener } from '../write-listener.js'

// A compare-and-set update is retried this many times against concurrent writers before a 409.
const UPDATE_ATTEMPTS = 5

/** How a request names an identity: Unkey's `identityId` or `externalId`; the id wins when both are given. */
export interface IdentityRef {
  identityId?: string
  externalId?: string
}

export interface IdentityPage {
  identities: IdentityRecord[]
  total: number
  cursor?: string
}

/**
 * Identities: stored under their externalId (keys find theirs by it, with no id of their own to keep in step),
 * found by id through a pointer id → externalId, listed by an index of ids. The pointer and the index entry are
 * written before the record and removed after it, so a crash leaves at most a pointer to nothing, which readers
 * skip (ids are random: a pointer is never claimed twice). A record's id is checked against the id asked for, so a
 * pointer never finds a later identity re-created under the same externalId.
 */
export class Identities {
  constructor(
    private readonly store: EntityStore,
    private readonly clock: Clock,
    private readonly onWrite: WriteListener,
  ) {}

  /** Creates the identity; 409 CONFLICT if one has this externalId. */
  async create(input: { externalId: string; meta?: Record<string, unknown>; ratelimits?: NamedRateLimit[] }) {
    const now = this.clock.now()
    const record: IdentityRecord = {
      id: newId('id', now),
      externalId: input.externalId,
      ...(input.meta !== undefined ? { meta: input.meta } : {}),
      ...(input.ratelimits?.length ? { ratelimits: input.ratelimits } : {}),
      createdAt: now,
    }
    await this.store.claimName(IDENTITY_ID_SCOPE, record.id, record.externalId)
    await this.store.addToIndex(IDENTITY_INDEX, record.id)
    const write = await this.store.writeEntity(identityAddress(record.externalId), record.id, 'created', record)
    if (typeof write === 'string') {
      await this.unlink(record)
      throw new ApiError(
        'CONFLICT',
        `Identity with externalId ${JSON.stringify(record.externalId)} already exists in this workspace`,
        undefined,
        { problem: 'data/identity_already_exists' },
      )
    }
    this.onWrite(write)
    return record
  }

  /**
   * The identity with this externalId, created (empty) if there is none: keys.createKey and updateKey bind a key to
   * its externalId's identity as Unkey's do. `created` says whether this call made it.
   */
  async upsert(externalId: string): Promise<{ identity: IdentityRecord; created: boolean }> {
    const existing = await this.byExternalId(externalId)
    if (existing) return { identity: existing.doc, created: false }
    try {
      return { identity: await this.create({ externalId }), created: true }
    } catch (err) {
      // Created by a concurrent request: that one is the identity.
      const winner = err instanceof ApiError && err.code === 'CONFLICT' && (await this.byExternalId(externalId))
      if (winner) return { identity: winner.doc, created: false }
      throw err
    }
  }

  async byExternalId(externalId: string): Promise<StoredEntity<IdentityRecord> | null> {
    return this.store.getEntity<IdentityRecord>(identityAddress(externalId))
  }

  async byId(identityId: string): Promise<StoredEntity<IdentityRecord> | null> {
    const externalId = await this.store.readName(IDENTITY_ID_SCOPE, identityId)
    if (externalId === null) return null
    const found = await this.byExternalId(externalId)
    return found && found.doc.id === identityId ? found : null
  }

  /** The identity v2 names by one string (`identity`): the one with this id, else the one with this externalId. */
  async named(identity: string): Promise<StoredEntity<IdentityRecord> | null> {
    return (await this.byId(identity)) ?? (await this.byExternalId(identity))
  }

  /** The identity a request names (by id first), or null. */
  async find(ref: IdentityRef): Promise<StoredEntity<IdentityRecord> | null> {
    if (ref.identityId !== undefined) return this.byId(ref.identityId)
    return ref.externalId === undefined ? null : this.byExternalId(ref.externalId)
  }

  /** Applies `change` to the freshest record, retrying when another write got there first; 404 if it is gone. */
  async update(ref: IdentityRef, change: (current: IdentityRecord) => IdentityRecord): Promise<IdentityRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.find(ref)
      if (!current) throw notFound('identity', `identity ${nameOf(ref)} not found`)
      const next = { ...change(current.doc), updatedAt: this.clock.now() }
      const address = identityAddress(current.doc.externalId)
      const write = await this.store.writeEntity(address, current.doc.id, 'updated', next, current.rev)
      if (write === 'missing') throw notFound('identity', `identity ${nameOf(ref)} not found`)
      if (typeof write !== 'string') {
        this.onWrite(write)
        return next
      }
      if (attempt === UPDATE_ATTEMPTS) throw new WriteConflictError()
    }
  }

  /** Deletes the identity (its keys keep their externalId and lose its meta and limits); 404 if there is none. */
  async delete(identityId: string): Promise<IdentityRecord> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.byId(identityId)
      if (!current) throw notFound('identity', `identity ${identityId} not found`)
      // At the revision read: an identity re-created under the same externalId meanwhile is another one, kept.
      const address = identityAddress(current.doc.externalId)
      const write = await this.store.writeEntity(address, identityId, 'deleted', null, current.rev)
      if (typeof write !== 'string') {
        this.onWrite(write)
        await this.unlink(current.doc)
        return current.doc
      }
      if (attempt === UPDATE_ATTEMPTS) throw new WriteConflictError()
    }
  }

  /** A page of identities in id order (oldest first), after `cursor` (the last id of the page before). */
  async list(options: { cursor?: string; limit: number }): Promise<IdentityPage> {
    const page = await this.store.listIndex(IDENTITY_INDEX, options)
    const found = await Promise.all(page.members.map((id) => this.byId(id)))
    return {
      identities: found.flatMap((entry) => (entry ? [entry.doc] : [])),
      total: page.total,
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    }
  }

  /** A page of identities in id order after `cursor`, those `keep` accepts; a cursor only when more follow. */
  async page(options: PageOptions, keep?: (identity: IdentityRecord) => boolean): Promise<RecordPage<IdentityRecord>> {
    const load = async (id: string) => (await this.byId(id))?.doc ?? null
    return pageThroughIndex(this.store, IDENTITY_INDEX, options, load, keep)
  }

  private async unlink(record: IdentityRecord): Promise<void> {
    await this.store.releaseName(IDENTITY_ID_SCOPE, record.id, record.externalId)
    await this.store.removeFromIndex(IDENTITY_INDEX, record.id)
  }
}

function nameOf(ref: IdentityRef): string {
  return ref.identityId ?? ref.externalId ?? ''
}
