import type { KeyRecord } from '../shared/records.js'
import type { KeyStore } from '../shared/store/key-store.js'
import type { KeyCache } from './key-cache.js'

interface PendingRead {
  promise: Promise<KeyRecord | null>
  /** Set when a change event for the hash arrives while the read is in flight. */
  invalidated: boolean
}

// A key changed this many times during consecutive reads is answered from the last read, uncached.
const MAX_REREADS = 3

/**
 * The cache-miss path: one store read per hash at a time, however many requests wait for it. A read
 * overtaken by a change event is repeated, because it may have returned the state before the change —
 * so a slow read can never put an older record in the cache than the change that just arrived.
 */
export class KeyLookup {
  private readonly pending = new Map<string, PendingRead>()

  constructor(private readonly store: KeyStore, private readonly cache: KeyCache) {}

  read(hash: string): Promise<KeyRecord | null> {
    const inFlight = this.pending.get(hash)
    if (inFlight) return inFlight.promise
    const pending: PendingRead = { promise: Promise.resolve(null), invalidated: false }
    pending.promise = this.readUntilCurrent(hash, pending).finally(() => this.pending.delete(hash))
    this.pending.set(hash, pending)
    return pending.promise
  }

  /** A change event for `hash` arrived: a read in flight may be older than it. */
  changed(hash: string): void {
    const pending = this.pending.get(hash)
    if (pending) pending.invalidated = true
  }

  private async readUntilCurrent(hash: string, pending: PendingRead): Promise<KeyRecord | null> {
    for (let attempt = 0; ; attempt++) {
      pending.invalidated = false
      const record = await this.store.getKeyByHash(hash)
      if (!pending.invalidated) {
        this.cache.offer(hash, record)
        return record
      }
      if (attempt === MAX_REREADS) return record
    }
  }
}
