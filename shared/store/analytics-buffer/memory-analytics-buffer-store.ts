import {
  compareBatchIds,
  type AnalyticsBufferStore,
  type BufferedBatch,
  type BufferLook,
  type ThroughReport,
} from './analytics-buffer-store.js'

interface Buffer {
  batches: BufferedBatch[]
  bytes: number
  trimmedRows: number
  pending?: { first: string; last: string }
  /** The last id given, for the next (ids increase as a stream's do). */
  lastMs: number
  lastSeq: number
}

/** The analytics buffers in process memory, for a single process (keygate dev, tests). */
export class MemoryAnalyticsBufferStore implements AnalyticsBufferStore {
  private readonly buffers = new Map<number, Buffer>()
  private readonly leases = new Map<string, { holder: string; until: number }>()
  private readonly reports = new Map<string, ThroughReport>()
  private readonly marks = new Map<string, number>()

  constructor(private readonly now: () => number = Date.now) {}

  private buffer(shard: number): Buffer {
    let buffer = this.buffers.get(shard)
    if (buffer === undefined) {
      buffer = { batches: [], bytes: 0, trimmedRows: 0, lastMs: 0, lastSeq: 0 }
      this.buffers.set(shard, buffer)
    }
    return buffer
  }

  async append(shard: number, batch: string, rows: number, maxBytes: number): Promise<number> {
    const buffer = this.buffer(shard)
    const size = Buffer.byteLength(batch)
    if (size > maxBytes) {
      buffer.trimmedRows += rows
      return rows
    }
    let trimmed = 0
    while (buffer.bytes + size > maxBytes && buffer.batches.length > 0) {
      const oldest = buffer.batches.shift()!
      buffer.bytes -= Buffer.byteLength(oldest.batch)
      trimmed += oldest.rows
    }
    buffer.trimmedRows += trimmed
    const ms = Math.max(this.now(), buffer.lastMs)
    const seq = ms === buffer.lastMs ? buffer.lastSeq + 1 : 0
    buffer.lastMs = ms
    buffer.lastSeq = seq
    buffer.batches.push({ id: `${ms}-${seq}`, batch, rows })
    buffer.bytes += size
    return trimmed
  }

  async look(shard: number, limit: number): Promise<BufferLook> {
    const { batches, bytes, trimmedRows, pending } = this.buffer(shard)
    const chosen =
      pending === undefined
        ? batches.slice(0, limit)
        : batches.filter(({ id }) => compareBatchIds(id, pending.first) >= 0 && compareBatchIds(id, pending.last) <= 0)
    return { batches: chosen.map((batch) => ({ ...batch })), bytes, trimmedRows, ...(pending ? { pending } : {}) }
  }

  async take(shard: number, first: string, last: string): Promise<void> {
    this.buffer(shard).pending = { first, last }
  }

  async complete(shard: number, last: string): Promise<void> {
    const buffer = this.buffer(shard)
    while (buffer.batches.length > 0 && compareBatchIds(buffer.batches[0]!.id, last) <= 0) {
      buffer.bytes -= Buffer.byteLength(buffer.batches.shift()!.batch)
    }
    delete buffer.pending
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    const lease = this.leases.get(name)
    const now = this.now()
    if (lease !== undefined && lease.holder !== holder && lease.until > now) return false
    this.leases.set(name, { holder, until: now + ttlMs })
    return true
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    if (this.leases.get(name)?.holder === holder) this.leases.delete(name)
  }

  async reportThrough(process: string, through: number, at: number): Promise<void> {
    this.reports.set(process, { through, at })
  }

  async forgetProcesses(processes: readonly string[]): Promise<void> {
    for (const process of processes) this.reports.delete(process)
  }

  async readReports(): Promise<Map<string, ThroughReport>> {
    return new Map([...this.reports].map(([process, report]) => [process, { ...report }]))
  }

  async readMark(name: string): Promise<number | undefined> {
    return this.marks.get(name)
  }

  async raiseMark(name: string, value: number): Promise<void> {
    const current = this.marks.get(name)
    if (current === undefined || current < value) this.marks.set(name, value)
  }
}
