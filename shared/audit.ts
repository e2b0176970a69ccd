import type { AuditEntry } from './ui-shapes.js'

export type { AuditEntry }

export type NewAuditEntry = Omit<AuditEntry, 'id'>

/** How many entries the log keeps (approximately, on Redis). */
export const AUDIT_LOG_MAX_LEN = 100_000
