/** One management write, as the audit log keeps it: who, what, when, and the record before and after. */
export interface AuditEntry {
  /** Position in the log (a stream id on Redis); also the paging cursor. */
  id: string
  at: number
  /** The root key that made the call (`root_bootstrap` for KEYGATE_ROOT_KEY, `cli` for `keygate root-key …`). */
  rootKeyId: string
  /** The operation, e.g. `keys.updateKey`. */
  action: string
  apiId?: string
  /** The key the write is about; for rootKeys.* writes, the root key (`root_…`). */
  keyId?: string
  /** The record as the API shows it (never a hash or a key). */
  before?: Record<string, unknown>
  after?: Record<string, unknown>
  /** What the call said beyond the record, when it matters later (keys.migrateKeys: its `migrationId`). */
  context?: Record<string, unknown>
  requestId?: string
  /**
   * The customer portal session that made the call (control-plane/portal/): `rootKeyId` is then the root key that
   * minted it, the authority the session acts under.
   */
  portalSession?: { id: string; portalId: string; externalId: string }
}

export type NewAuditEntry = Omit<AuditEntry, 'id'>

/** How many entries the log keeps (approximately, on Redis). */
export const AUDIT_LOG_MAX_LEN = 100_000
