import { AUDIT_LOG_MAX_LEN, type AuditEntry, type NewAuditEntry } from '../../audit.js'
import type { AuditStore } from './audit-store.js'

/** The audit log in process memory, capped as the Redis stream is. */
export class MemoryAuditStore implements AuditStore {
  private readonly entries: AuditEntry[] = []
  private sequence = 0
  /** The time part of the last id: like a stream's, it never goes back, even when an entry's `at` does. */
  private lastMs = 0

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    // Ids sort like stream ids, in the order entries were appended: time, then a sequence number. The time is the
    // entry's unless that is before the last id's (the writer's clock stepped back): listAudit's cursor compares ids.
    this.lastMs = Math.max(this.lastMs, entry.at)
    this.sequence++
    this.entries.push({ ...structuredClone(entry), id: `${this.lastMs}-${this.sequence}` })
    if (this.entries.length > AUDIT_LOG_MAX_LEN) this.entries.splice(0, this.entries.length - AUDIT_LOG_MAX_LEN)
  }

  async listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]> {
    // Like a stream: everything older than the cursor, whether or not the cursor's own entry is still kept.
    const older = (id: string) => {
      const [at, seq] = id.split('-').map(Number) as [number, number]
      const [cursorAt, cursorSeq] = options.cursor!.split('-').map(Number) as [number, number]
      return at < cursorAt || (at === cursorAt && seq < cursorSeq)
    }
    let end = this.entries.length
    if (options.cursor !== undefined) while (end > 0 && !older(this.entries[end - 1]!.id)) end--
    return this.entries
      .slice(Math.max(0, end - options.limit), end)
      .reverse()
      .map((entry) => structuredClone(entry))
  }
}
