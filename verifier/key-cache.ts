import type { LRUCache } from 'lru-cache'
import type { CacheSettings } from '../shared/config/settings.js'
import type { KeyRecord } from '../shared/keys/records.js'
import { toCachedKey, type CachedKey } from './cached-key.js'
import { shardOf } from '../shared/shards.js'
import { growingLru } from './growing-lru.js'

/**
 * Key records by hash, and a short memory of hashes that matched no key. Newer wins: a record replaces a
 * cached one only if its revision is higher, and an event drops any cached record older than itself.
 */
export class KeyCache {
  private readonly known: LRUCache<string, CachedKey>
  private readonly unknown: LRUCache<string, true>
  /**
   * Bumped whenever entries are dropped wholesale. A read that started in an older epoch is not cached: it
   * may predate whatever the drop was for.
   */
  epoch = 0

  constructor(options: CacheSettings) {
    this.known = growingLru(options.maxKeys)
    this.unknown = growingLru(options.maxUnknown, { ttl: options.unknownTtlMs, ttlAutopurge: false })
  }

  /** The cached record, null for a remembered unknown hash, undefined when the store must be asked. */
  get(hash: string): CachedKey | null | undefined {
    const record = this.known.get(hash)
    if (record !== undefined) return record
    return this.unknown.get(hash) ? null : undefined
  }

  /** Stores what a read found, unless the cache already holds something newer. */
  offer(hash: string, record: KeyRecord | null): void {
    if (record === null) {
      this.unknown.set(hash, true)
      return
    }
    // Keyed by the record's own hash string (equal to `hash`): the lean copy points at it, so it is held once.
    const cached = this.known.peek(record.hash)
    if (cached === undefined || cached.rev < record.rev) this.known.set(record.hash, toCachedKey(record))
    this.unknown.delete(hash)
  }

  /** A change at `rev` happened to the key with this hash: forget whatever older state is cached. */
  invalidate(hash: string, rev: number): void {
    const cached = this.known.peek(hash)
    if (cached !== undefined && cached.rev < rev) this.known.delete(hash)
    this.unknown.delete(hash)
  }

  /** Forgets everything. */
  clear(): void {
    this.epoch++
    this.known.clear()
    this.unknown.clear()
  }

  /** Forgets every entry of a shard whose changes can no longer be replayed. Returns how many went. */
  dropShard(shard: number): number {
    this.epoch++
    let dropped = 0
    for (const hash of [...this.known.keys()]) {
      if (shardOf(hash) === shard) {
        this.known.delete(hash)
        dropped++
      }
    }
    this.unknown.clear()
    return dropped
  }

  get size(): number {
    return this.known.size
  }
}
