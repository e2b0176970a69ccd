import { entityAddress, type EntityType } from '../shared/entity.js'
import { ApiError, WriteConflictError, notFound, type RecordKind } from '../shared/errors/errors.js'
import { idTimestamp } from '../shared/ids.js'
import type { EntityStore, EntityWrite } from '../shared/store/entities/entity-store.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from './index-page.js'
import type { WriteListener } from './write-listener.js'

// A name claimed by a record that never appeared is a create in flight until it is this old; then it is debris.
const DANGLING_AFTER_MS = 60_000
// A compare-and-set update is retried this many times against concurrent writers before a 409.
const UPDATE_ATTEMPTS = 5
// Listing reads the index in pages of this size.
const LIST_PAGE = 100

/**
 * How a request names a permission or a role: `id` by its id alone; `id-or-name` by its id or, failing that, its
 * unique name (a permission's slug, a role's name).
 */
export type NamedBy = 'id' | 'id-or-name'

/** What every record kept by NamedRecords has. */
export interface NamedRecord {
  id: string
  createdAt: number
}

/**
 * Records of one entity type stored by id (`<type>:<id>`), unique by a name, listed by an index: permissions and
 * roles. The name pointer and the index entry are written before the record and removed after it, so a crash
 * leaves at most a pointer to nothing — skipped by readers, and taken over once old enough. Portals too (by slug).
 */
export class NamedRecords<T extends NamedRecord> {
  constructor(
    private readonly store: EntityStore,
    private readonly type: EntityType,
    /** What its records are, in messages and in v2's problem types (`data/role_not_found`). */
    private readonly noun: Extract<RecordKind, 'permission' | 'role' | 'portal'>,
    /** The unique name a record is found by: a permission's slug, a role's name. */
    private readonly nameOf: (record: T) => string,
    private readonly now: () => number,
    private readonly onWrite: WriteListener,
  ) {}

  address(id: string): string {
    return entityAddress(this.type, id)
  }

  async get(id: string): Promise<T | null> {
    return (await this.store.getEntity<T>(this.address(id)))?.doc ?? null
  }

  /** The record, or the contract's 404. */
  async require(id: string): Promise<T> {
    const record = await this.get(id)
    if (!record) throw notFound(this.noun, `${this.noun} ${id} not found`)
    return record
  }

  /** The record a request names by its id or, failing that, its name (v2's `permission`, `role`), or the 404. */
  async requireNamed(idOrName: string): Promise<T> {
    const record = (await this.get(idOrName)) ?? (await this.findByName(idOrName))
    if (!record) throw notFound(this.noun, `${this.noun} ${idOrName} not found`)
    return record
  }

  /** The record a request names, as `by` says it names it, or the 404. */
  async requireBy(named: string, by: NamedBy): Promise<T> {
    return by === 'id' ? this.require(named) : this.requireNamed(named)
  }

  async findByName(name: string): Promise<T | null> {
    const id = await this.store.readName(this.type, name)
    if (id === null) return null
    const record = await this.get(id)
    return record && this.nameOf(record) === name ? record : null
  }

  /** Creates the record under a name no other record of the type holds; 409 CONFLICT if one does. */
  async create(record: T): Promise<T> {
    const name = this.nameOf(record)
    const held = await this.store.claimName(this.type, name, record.id)
    if (held !== null && held !== record.id) {
      const holder = await this.get(held)
      const age = this.now() - (idTimestamp(held) ?? this.now())
      // A claim whose record never appeared, old enough not to be a create in flight, is taken over.
      if (holder || age < DANGLING_AFTER_MS || !(await this.store.replaceName(this.type, name, held, record.id))) {
        throw this.nameTaken(name)
      }
    }
    await this.store.addToIndex(this.type, record.id)
    const write = await this.store.writeEntity(this.address(record.id), record.id, 'created', record)
    if (typeof write === 'string') throw new Error(`unexpected reply to create: ${write}`)
    this.written(write)
    return record
  }

  /** The 409 for a name another record holds (v2 names the problem: `data/role_already_exists`). */
  nameTaken(name: string): ApiError {
    return new ApiError(
      'CONFLICT',
      `${capitalised(this.noun)} with name ${JSON.stringify(name)} already exists in this workspace`,
      undefined,
      { problem: `data/${this.noun}_already_exists` },
    )
  }

  /** Applies `change` to the freshest record, retrying when another write got there first. */
  async update(id: string, change: (current: T) => T): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.getEntity<T>(this.address(id))
      if (!current) throw notFound(this.noun, `${this.noun} ${id} not found`)
      const next = change(current.doc)
      const write = await this.store.writeEntity(this.address(id), id, 'updated', next, current.rev)
      if (write === 'missing') throw notFound(this.noun, `${this.noun} ${id} not found`)
      if (typeof write !== 'string') {
        this.written(write)
        return next
      }
      if (attempt === UPDATE_ATTEMPTS) throw new WriteConflictError()
    }
  }

  /** Deletes the record, then its name and index entry; 404 if there is none. */
  async delete(id: string): Promise<T> {
    const record = await this.require(id)
    const write = await this.store.writeEntity(this.address(id), id, 'deleted', null)
    if (write === 'missing') throw notFound(this.noun, `${this.noun} ${id} not found`)
    if (typeof write === 'string') throw new Error(`unexpected reply to delete: ${write}`)
    this.written(write)
    await this.store.releaseName(this.type, this.nameOf(record), id)
    await this.store.removeFromIndex(this.type, id)
    return record
  }

  /** Deletes the record a request names, as `by` says it names it; 404 if there is none. */
  async deleteNamed(named: string, by: NamedBy): Promise<T> {
    return this.delete(by === 'id' ? named : (await this.requireNamed(named)).id)
  }

  /** Every record, oldest first (ids sort by creation time), at most `max`. */
  async list(max: number): Promise<T[]> {
    const records: T[] = []
    let cursor: string | undefined
    while (records.length < max) {
      const page = await this.store.listIndex(this.type, { cursor, limit: Math.min(LIST_PAGE, max - records.length) })
      const found = await Promise.all(page.members.map((id) => this.get(id)))
      for (const record of found) if (record) records.push(record)
      if (!page.cursor) break
      cursor = page.cursor
    }
    return records
  }

  /** A page of records in id order (oldest first) after `cursor`, those `keep` accepts. */
  async page(options: PageOptions, keep?: (record: T) => boolean): Promise<RecordPage<T>> {
    return pageThroughIndex(this.store, this.type, options, (id) => this.get(id), keep)
  }

  private written(write: EntityWrite): void {
    this.onWrite(write)
  }
}

function capitalised(noun: string): string {
  return noun.charAt(0).toUpperCase() + noun.slice(1)
}
