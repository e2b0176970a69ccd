import type { ChangeEvent } from '../shared/change-event.js'
import { StoreUnavailableError } from '../shared/errors/errors.js'

/** Where a lookup puts what it read: the key cache or the entity cache. */
export interface LookupCache<R> {
  /** Bumped when entries are dropped wholesale; a read that started in an older epoch is not cached. */
  readonly epoch: number
  offer(id: string, record: R | null): void
}

interface PendingRead<R> {
  promise: Promise<R | null>
  /** The newest change event seen for the id while the read was in flight (0 = none). */
  minRev: number
  /** Whether that newest change was a delete (then "no record" is the current answer). */
  deleted: boolean
}

// Set before the read starts and once it has settled; never awaited.
const NOT_YET: Promise<never> = new Promise(() => {})

// A record changed this many times during consecutive reads gets a 503 rather than a possibly older answer.
const MAX_READS = 4

/**
 * The cache-miss path: one store read per id (a key's hash, an entity's address) at a time, however many requests
 * wait for it. A read is accepted only if it is at least as new as every change event that arrived for the id
 * meanwhile; otherwise it is repeated — so a slow read can never answer, or cache, an older state than a change
 * the verifier has already seen.
 */
export class RecordLookup<R extends { rev: number }> {
  private readonly pending = new Map<string, PendingRead<R>>()

  /** `maxPending`: distinct ids being read at once; past it a miss fails fast (503) instead of queueing. */
  constructor(
    private readonly readRecord: (id: string) => Promise<R | null>,
    private readonly cache: LookupCache<R>,
    private readonly maxPending = 10_000,
    private readonly what = 'record',
    /**
     * Whether a record read for `id` is the record of `id`: a store (a connection) that answers another record is
     * confused, and its answer is refused (503), never cached.
     */
    private readonly isRecordOf: (id: string, record: R) => boolean = () => true,
  ) {}

  read(id: string): Promise<R | null> {
    const inFlight = this.pending.get(id)
    if (inFlight) return inFlight.promise
    // A flood of random keys is all misses: bound the reads (and their memory) rather than queue them.
    if (this.pending.size >= this.maxPending) {
      return Promise.reject(new StoreUnavailableError(`too many ${this.what}s are being looked up at once; retry`))
    }
    const pending: PendingRead<R> = { promise: NOT_YET, minRev: 0, deleted: false }
    pending.promise = this.readUntilCurrent(id, pending, 1)
    this.pending.set(id, pending)
    return pending.promise
  }

  /** A change event for the id arrived: a read in flight must be at least this new. */
  changed(event: Pick<ChangeEvent, 'hash' | 'rev' | 'kind'>): void {
    const pending = this.pending.get(event.hash)
    if (pending && event.rev >= pending.minRev) {
      pending.minRev = event.rev
      pending.deleted = event.kind === 'deleted'
    }
  }

  /**
   * Drops a settled read, and its hold on the answer. Deleting the Map entry alone would leave the record reachable for
   * the young-generation collector: on every cache miss the record, and the verdict, context and serialised answer that
   * hang off it, would be promoted to the old generation and live until the next full collection. The likely path: a
   * table V8 leaves behind when it rehashes the Map still points at the entries it held, and once promoted it counts as
   * a root for every scavenge. Whatever still holds this object, it no longer leads to the record.
   */
  private forget(id: string, pending: PendingRead<R>): void {
    this.pending.delete(id)
    pending.promise = NOT_YET
  }

  /**
   * Reads until the answer is current, then forgets the pending read. A chain of promises rather than an async loop
   * with a `finally`: this is every cache miss, and those frames and promises would be a good part of a miss's garbage.
   */
  private readUntilCurrent(id: string, pending: PendingRead<R>, attempt: number): Promise<R | null> {
    const epoch = this.cache.epoch
    let read: Promise<R | null>
    try {
      read = this.readRecord(id)
    } catch (err) {
      // A reader that throws rather than rejecting still gets its pending read forgotten.
      read = Promise.reject(err instanceof Error ? err : new Error(String(err)))
    }
    return read.then(
      (record) => {
        if (record && !this.isRecordOf(id, record)) {
          this.forget(id, pending)
          throw new StoreUnavailableError(`the store answered another ${this.what} than the one asked for`)
        }
        const current = record ? record.rev >= pending.minRev : pending.minRev === 0 || pending.deleted
        if (current) {
          this.forget(id, pending)
          if (epoch === this.cache.epoch) this.cache.offer(id, record)
          return record
        }
        if (attempt < MAX_READS) return this.readUntilCurrent(id, pending, attempt + 1)
        this.forget(id, pending)
        throw new StoreUnavailableError(`${this.what} kept changing during ${MAX_READS} reads`)
      },
      (err: unknown) => {
        this.forget(id, pending)
        throw err
      },
    )
  }
}
