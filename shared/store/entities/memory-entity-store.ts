import type { ChangeEvent } from '../../change-event.js'
import { entityShard, type StoredEntity } from '../../entity.js'
import type { EntityStore, EntityWrite, EntityWriteRefused, IndexPage } from './entity-store.js'
import { snapshotKept } from '../change-snapshots/change-snapshot-store.js'
import type { MemoryChangeSnapshotStore } from '../change-snapshots/memory-change-snapshot-store.js'
import { SortedIds } from '../sorted-ids.js'

/** Appends a change to its shard's log and publishes it (the memory store's one sequence per shard). */
export type LogChange = (
  shard: number,
  kind: 'created' | 'updated' | 'deleted',
  id: string,
  hashOrAddress: string,
  apiId: string,
) => ChangeEvent

/** Entities in process memory (the embedded default); each method is one synchronous step, so atomic. */
export class MemoryEntityStore implements EntityStore {
  private readonly records = new Map<string, { doc: string; rev: number }>()
  private readonly indexes = new Map<string, SortedIds>()
  private readonly names = new Map<string, string>()

  constructor(
    private readonly logChange: LogChange,
    private readonly snapshots: MemoryChangeSnapshotStore,
  ) {}

  /** The stored document, read in the caller's synchronous step (a key's write names its identity with it). */
  docOf<T>(address: string): T | undefined {
    const record = this.records.get(address)
    return record ? (JSON.parse(record.doc) as T) : undefined
  }

  async getEntity<T>(address: string): Promise<StoredEntity<T> | null> {
    const record = this.records.get(address)
    // Kept as JSON, as on Redis: a reader can never change what is stored.
    return record ? { doc: JSON.parse(record.doc) as T, rev: record.rev } : null
  }

  async writeEntity(
    address: string,
    id: string,
    kind: 'created' | 'updated' | 'deleted',
    doc: unknown,
    expectedRev?: number,
  ): Promise<EntityWrite | EntityWriteRefused> {
    const current = this.records.get(address)
    if (kind === 'created' && current) return 'exists'
    if (kind !== 'created') {
      if (!current) return 'missing'
      if (expectedRev !== undefined && current.rev !== expectedRev) return 'conflict'
    }
    const event = this.logChange(entityShard(address), kind, id, address, '')
    if (snapshotKept(address)) {
      const written = kind === 'deleted' ? current!.doc : JSON.stringify(doc)
      this.snapshots.keep(event.shard, event.rev, { doc: JSON.parse(written) as Record<string, unknown> })
    }
    if (kind === 'deleted') this.records.delete(address)
    else this.records.set(address, { doc: JSON.stringify(doc), rev: event.rev })
    return { rev: event.rev, event }
  }

  async addToIndex(index: string, member: string): Promise<void> {
    let ids = this.indexes.get(index)
    if (!ids) this.indexes.set(index, (ids = new SortedIds()))
    ids.add(member)
  }

  async removeFromIndex(index: string, member: string): Promise<void> {
    this.indexes.get(index)?.delete(member)
  }

  async listIndex(index: string, options: { cursor?: string; limit: number }): Promise<IndexPage> {
    const ids = this.indexes.get(index)
    if (!ids) return { members: [], total: 0 }
    const members: string[] = []
    for (const id of ids.after(options.cursor)) {
      members.push(id)
      if (members.length === options.limit) return { members, total: ids.size, cursor: id }
    }
    return { members, total: ids.size }
  }

  async claimName(scope: string, name: string, value: string): Promise<string | null> {
    const key = `${scope} ${name}`
    const held = this.names.get(key)
    if (held !== undefined) return held
    this.names.set(key, value)
    return null
  }

  async readName(scope: string, name: string): Promise<string | null> {
    return this.names.get(`${scope} ${name}`) ?? null
  }

  async replaceName(scope: string, name: string, from: string, to: string): Promise<boolean> {
    const key = `${scope} ${name}`
    if (this.names.get(key) !== from) return false
    this.names.set(key, to)
    return true
  }

  async releaseName(scope: string, name: string, value: string): Promise<void> {
    const key = `${scope} ${name}`
    if (this.names.get(key) === value) this.names.delete(key)
  }
}
