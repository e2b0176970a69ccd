import type { Clock } from '../../shared/clock.js'
import { WriteConflictError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import {
  digestOf,
  isWildcard,
  overrideAddress,
  type NamespaceRecord,
  type OverrideRecord,
  type OverrideRule,
} from '../../shared/ratelimits/ratelimit-namespace.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from '../index-page.js'
import type { WriteListener } from '../write-listener.js'
import type { RatelimitNamespaces } from './ratelimit-namespaces.js'

// A write that keeps losing to concurrent writes of the same override gets a 409.
const SET_ATTEMPTS = 5

/** The index of a namespace's overrides: `<overrideId>:<digest of the identifier>`, so members sort by creation. */
const indexOf = (namespaceId: string) => `rlor:${namespaceId}`
const memberOf = (override: OverrideRecord) => `${override.id}:${digestOf(override.identifier)}`
const addressOfMember = (namespaceId: string, member: string) =>
  `override:${namespaceId}:${member.slice(member.indexOf(':') + 1)}`

export interface OverridePage {
  overrides: OverrideRecord[]
  total: number
  cursor?: string
}

/**
 * Overrides of rate-limit namespaces, one record per identifier (its address: the namespace and the identifier's
 * digest), listed by an index per namespace. A wildcard override is also put in its namespace's record, which is
 * what verifiers match identifiers against: written after the override on set and removed before it on delete (and
 * again after it, and by a set that finds its record deleted meanwhile, so that a set and a delete racing never leave
 * a pattern applied that nothing lists), so a crash between the two leaves an override listed but not applied,
 * which repeating the call mends.
 */
export class RatelimitOverrides {
  constructor(
    private readonly store: EntityStore,
    private readonly namespaces: RatelimitNamespaces,
    private readonly clock: Clock,
    private readonly onWrite: WriteListener,
  ) {}

  async get(namespace: NamespaceRecord, identifier: string): Promise<OverrideRecord | null> {
    return (await this.store.getEntity<OverrideRecord>(overrideAddress(namespace.id, identifier)))?.doc ?? null
  }

  /** Sets the identifier's override: a new one, or the one it has changed in place (same id, Unkey's). */
  async set(namespace: NamespaceRecord, identifier: string, rule: OverrideRule): Promise<OverrideRecord> {
    const address = overrideAddress(namespace.id, identifier)
    for (let attempt = 1; ; attempt++) {
      const now = this.clock.now()
      const current = await this.store.getEntity<OverrideRecord>(address)
      const next: OverrideRecord = current
        ? { ...current.doc, ...rule, updatedAt: now }
        : { id: newId('rlor', now), namespaceId: namespace.id, identifier, ...rule, createdAt: now }
      // Checked before the override is written, so that a full namespace refuses it without leaving it half set.
      if (!current && isWildcard(identifier)) await this.namespaces.requireWildcardRoom(namespace.name)
      if (!current) await this.store.addToIndex(indexOf(namespace.id), memberOf(next))
      const write = current
        ? await this.store.writeEntity(address, next.id, 'updated', next, current.rev)
        : await this.store.writeEntity(address, next.id, 'created', next)
      if (typeof write !== 'string') {
        this.onWrite(write)
        if (isWildcard(identifier)) {
          await this.namespaces.setWildcard(namespace.name, wildcardOf(next))
          // A delete that ran whole between the two writes left the pattern in the namespace with no record to
          // list or delete it by: take it out again.
          if (!(await this.store.getEntity(address))) await this.namespaces.removeWildcard(namespace.name, identifier)
        }
        return next
      }
      if (!current) await this.store.removeFromIndex(indexOf(namespace.id), memberOf(next))
      if (attempt === SET_ATTEMPTS) throw new WriteConflictError()
    }
  }

  /** Deletes the identifier's override; null if it has none. */
  async delete(namespace: NamespaceRecord, identifier: string): Promise<OverrideRecord | null> {
    const address = overrideAddress(namespace.id, identifier)
    const current = await this.store.getEntity<OverrideRecord>(address)
    if (!current) return null
    if (isWildcard(identifier)) await this.namespaces.removeWildcard(namespace.name, identifier)
    const write = await this.store.writeEntity(address, current.doc.id, 'deleted', null)
    if (write === 'missing') return null
    if (typeof write === 'string') throw new Error(`unexpected reply to delete: ${write}`)
    this.onWrite(write)
    // Again after the record: a set of the same pattern may have put it back in between.
    if (isWildcard(identifier)) await this.namespaces.removeWildcard(namespace.name, identifier)
    await this.store.removeFromIndex(indexOf(namespace.id), memberOf(current.doc))
    return current.doc
  }

  /**
   * A page of the namespace's overrides, oldest first, with a cursor only when another follows (v2: Unkey's SDK asks
   * for another page while a cursor comes back).
   */
  async page(namespace: NamespaceRecord, options: PageOptions): Promise<RecordPage<OverrideRecord>> {
    const load = async (member: string) =>
      (await this.store.getEntity<OverrideRecord>(addressOfMember(namespace.id, member)))?.doc ?? null
    return pageThroughIndex(this.store, indexOf(namespace.id), options, load)
  }

  /** A page of the namespace's overrides, oldest first; `cursor` (opaque) only when the page is full. */
  async list(
    namespace: NamespaceRecord,
    options: { cursor?: string | undefined; limit: number },
  ): Promise<OverridePage> {
    const page = await this.store.listIndex(indexOf(namespace.id), {
      limit: options.limit,
      ...(options.cursor ? { cursor: options.cursor } : {}),
    })
    const found = await Promise.all(
      page.members.map((member) => this.store.getEntity<OverrideRecord>(addressOfMember(namespace.id, member))),
    )
    // A member whose record is missing is a set in flight (or one a crash cut short): skipped, as listKeys does.
    const overrides = found.flatMap((stored) => (stored ? [stored.doc] : []))
    return { overrides, total: page.total, ...(page.cursor ? { cursor: page.cursor } : {}) }
  }
}

const wildcardOf = (override: OverrideRecord) => ({
  id: override.id,
  identifier: override.identifier,
  limit: override.limit,
  duration: override.duration,
  async: override.async,
})
