import type { AuditEntry, NewAuditEntry } from '../../audit.js'

/**
 * The audit log (`store.audit`): capped at AUDIT_LOG_MAX_LEN entries, oldest dropped first. Entry ids sort in the
 * order entries were appended.
 */
export interface AuditStore {
  appendAudit(entry: NewAuditEntry): Promise<void>
  /** Audit entries newest first, after `cursor` (an entry id, exclusive): none after `0-0`, the first id there is. */
  listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]>
}
