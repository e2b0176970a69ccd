/**
 * How many buffers the verifiers' analytics batches are spread over. Each is one stream under a hash tag of its own,
 * so that on a Redis Cluster the buffers (and the memory they hold) spread over the masters; a process appends to one
 * of them, chosen at start, so that its batches stay in order.
 */
export const ANALYTICS_BUFFER_SHARDS = 8

/** A batch as a buffer holds it: its id (the stream entry's, ordered), its encoded rows and how many rows it has. */
export interface BufferedBatch {
  id: string
  batch: string
  rows: number
}

/** Where the ingest of one buffer stands. */
export interface BufferProgress {
  /**
   * The batches an ingest took and has not finished (first and last id, inclusive): an ingest that died or failed
   * after taking them must insert exactly these again, under the same token, so that the engine drops a repeat.
   */
  pending?: { first: string; last: string }
  /** Rows trimmed from this buffer since it was made, to stay within its bound (never ingested). */
  trimmedRows: number
  /** Bytes of batches held. */
  bytes: number
}

/** What one look at a buffer finds: its progress, and the batches to ingest next (the pending ones, if any). */
export interface BufferLook extends BufferProgress {
  batches: BufferedBatch[]
}

/**
 * The verifiers' analytics batches on their way to the engine (`store.analyticsBuffer`): per buffer an ordered queue
 * of encoded batches, bounded in bytes, and where their ingest stands. A verifier appends; one control plane at a time
 * (the lease) takes batches, inserts them into the engine and then completes them, which removes them. Batches are
 * removed otherwise only to keep a buffer within its bound, oldest first, and counted (`trimmedRows`).
 */
export interface AnalyticsBufferStore {
  /**
   * Appends a batch of `rows` rows to buffer `shard`. If the buffer would then hold more than `maxBytes`, its oldest
   * batches are removed first (even pending ones: the bound holds whatever the ingest's state) and their rows added to
   * `trimmedRows`; a batch larger than `maxBytes` by itself is not added. Answers the rows removed or refused.
   */
  append(shard: number, batch: string, rows: number, maxBytes: number): Promise<number>
  /**
   * The buffer's progress and up to `limit` batches: the pending ones if an ingest took some (those still held), else
   * the oldest held, in order.
   */
  look(shard: number, limit: number): Promise<BufferLook>
  /** Marks batches `first`…`last` as taken by an ingest (pending), so that a retry inserts the same ones. */
  take(shard: number, first: string, last: string): Promise<void>
  /** The pending batches are in the engine: removes them (and any before them) and clears pending. */
  complete(shard: number, last: string): Promise<void>
  /**
   * Holds the lease `name` for `holder` for `ttlMs`: true if it was free, expired or already this holder's. One
   * control plane at a time ingests.
   */
  holdLease(name: string, holder: string, ttlMs: number): Promise<boolean>
  /** Gives the lease up if `holder` has it. */
  releaseLease(name: string, holder: string): Promise<void>
  /**
   * Records that every row the recording process `process` recorded before `through` (Unix ms) is in a buffer, as
   * that process said at `at` (Unix ms, its clock): what the ingest's watermark is made of.
   */
  reportThrough(process: string, through: number, at: number): Promise<void>
  /** Forgets the reports of these processes (stopped, having handed everything over; or gone). */
  forgetProcesses(processes: readonly string[]): Promise<void>
  /** Each recording process's last report. */
  readReports(): Promise<Map<string, ThroughReport>>
  /** Mark `name` (the ingest's watermark, how far usage events were sent), Unix ms; undefined if never raised. */
  readMark(name: string): Promise<number | undefined>
  /** Raises mark `name` to `value`, unless it is there or past already: a mark never goes back. */
  raiseMark(name: string, value: number): Promise<void>
}

/** What a recording process last said: every row it recorded before `through` is in a buffer, said at `at`. */
export interface ThroughReport {
  through: number
  at: number
}

/** Stream ids compare as (milliseconds, sequence). */
export function compareBatchIds(a: string, b: string): number {
  const [aMs = 0, aSeq = 0] = a.split('-').map(Number)
  const [bMs = 0, bSeq = 0] = b.split('-').map(Number)
  return aMs - bMs || aSeq - bSeq
}
