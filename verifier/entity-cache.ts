import type { LRUCache } from 'lru-cache'
import { entityShard, type StoredEntity } from '../shared/entity.js'
import { growingLru } from './growing-lru.js'

interface Entry {
  /** The record's document, or null: the store holds none (kept until a change for the address drops it). */
  doc: unknown
  rev: number
}

/**
 * Entities (roles, permissions, identities…) by address, including the knowledge that one does not exist.
 * Newer wins, as in the key cache. Every change bumps `generation`, so that what was resolved from these records
 * (a key's effective permissions, its identity) is recomputed on its next use: such changes are rare, and one
 * event then reaches every key that depended on the record without any fan-out.
 */
export class EntityCache {
  private readonly entries: LRUCache<string, Entry>
  /** Bumped by every change, drop and clear: a resolution made at an older generation is out of date. */
  generation = 0
  /** Bumped when entries are dropped wholesale: a read that started in an older epoch is not cached. */
  epoch = 0

  constructor(maxEntries: number) {
    this.entries = growingLru(maxEntries)
  }

  /** The document (null: no such record), or undefined when the store must be asked. */
  get(address: string): unknown {
    const entry = this.entries.get(address)
    return entry === undefined ? undefined : entry.doc
  }

  /** Stores what a read found, unless the cache already holds something newer. */
  offer(address: string, stored: StoredEntity<unknown> | null): void {
    const cached = this.entries.peek(address)
    const rev = stored?.rev ?? 0
    if (cached !== undefined && cached.rev > rev) return
    this.entries.set(address, { doc: stored?.doc ?? null, rev })
  }

  /** A change at `rev` happened to the entity: forget any older state (a known absence included). */
  invalidate(address: string, rev: number): void {
    this.generation++
    const cached = this.entries.peek(address)
    if (cached !== undefined && cached.rev < rev) this.entries.delete(address)
  }

  clear(): void {
    this.generation++
    this.epoch++
    this.entries.clear()
  }

  /** Forgets every entity of a shard whose changes can no longer be replayed. Returns how many went. */
  dropShard(shard: number): number {
    this.generation++
    this.epoch++
    let dropped = 0
    for (const address of [...this.entries.keys()]) {
      if (entityShard(address) === shard) {
        this.entries.delete(address)
        dropped++
      }
    }
    return dropped
  }

  get size(): number {
    return this.entries.size
  }
}
