import type { ChangeEvent } from '../shared/change-event.js'
import { StoreUnavailableError } from '../shared/errors.js'
import type { KeyRecord } from '../shared/records.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import type { KeyCache } from './key-cache.js'

interface PendingRead {
  promise: Promise<KeyRecord | null>
  /** The newest change event seen for the hash while the read was in flight (0 = none). */
  minRev: number
  /** Whether that newest change was a delete (then "no record" is the current answer). */
  deleted: boolean
}

// A key changed this many times during consecutive reads gets a 503 rather than a possibly older answer.
const MAX_READS = 4

/**
 * The cache-miss path: one store read per hash at a time, however many requests wait for it. A read is
 * accepted only if it is at least as new as every change event that arrived for the hash meanwhile;
 * otherwise it is repeated — so a slow read can never answer, or cache, an older state than a change
 * the verifier has already seen.
 */
export class KeyLookup {
  private readonly pending = new Map<string, PendingRead>()

  /** `maxPending`: distinct keys being read at once; past it a miss fails fast (503) instead of queueing. */
  constructor(
    private readonly store: VerifierStore,
    private readonly cache: KeyCache,
    private readonly maxPending = 10_000,
  ) {}

  read(hash: string): Promise<KeyRecord | null> {
    const inFlight = this.pending.get(hash)
    if (inFlight) return inFlight.promise
    // A flood of random keys is all misses: bound the reads (and their memory) rather than queue them.
    if (this.pending.size >= this.maxPending) {
      return Promise.reject(new StoreUnavailableError('too many keys are being looked up at once; retry'))
    }
    const pending: PendingRead = { promise: Promise.resolve(null), minRev: 0, deleted: false }
    pending.promise = this.readUntilCurrent(hash, pending).finally(() => this.pending.delete(hash))
    this.pending.set(hash, pending)
    return pending.promise
  }

  /** A change event for the hash arrived: a read in flight must be at least this new. */
  changed(event: Pick<ChangeEvent, 'hash' | 'rev' | 'kind'>): void {
    const pending = this.pending.get(event.hash)
    if (pending && event.rev >= pending.minRev) {
      pending.minRev = event.rev
      pending.deleted = event.kind === 'deleted'
    }
  }

  private async readUntilCurrent(hash: string, pending: PendingRead): Promise<KeyRecord | null> {
    for (let attempt = 1; attempt <= MAX_READS; attempt++) {
      const epoch = this.cache.epoch
      const record = await this.store.getKeyByHash(hash)
      const current = record ? record.rev >= pending.minRev : pending.minRev === 0 || pending.deleted
      if (current) {
        if (epoch === this.cache.epoch) this.cache.offer(hash, record)
        return record
      }
    }
    throw new StoreUnavailableError(`key record kept changing during ${MAX_READS} reads`)
  }
}
