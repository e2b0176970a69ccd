import type { AuditEntry } from '../../shared/audit.js'
import { ApiError } from '../../shared/errors/errors.js'
import type { AuditStore } from '../../shared/store/audit/audit-store.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'

/** What audit.list can narrow the log to: entries that match every field given. */
export interface AuditFilter {
  action?: string | undefined
  rootKeyId?: string | undefined
  apiId?: string | undefined
  keyId?: string | undefined
}

/** A page of the log: where it starts (after `cursor`; none: the newest entry) and how many entries it holds. */
export interface ListAuditInput extends AuditFilter {
  cursor?: string | undefined
  limit: number
}

export interface AuditPage {
  entries: AuditEntry[]
  /** Where the next (older) page starts; absent when the log ends. */
  cursor?: string
}

/** Entries read from the store at a time while filtering. */
const CHUNK = 500
/**
 * Entries one filtered call reads at most (of the log's 100,000): past them it answers what it found, maybe fewer
 * than `limit`, with a cursor to go on from, so that a filter matching nothing costs a bounded read per call.
 */
export const MAX_SCANNED = 10_000

/** The audit log, newest first, filtered by action, root key, api or key: for root keys with `*` only. */
export async function listAudit(deps: ControlPlaneDeps, caller: Caller, input: ListAuditInput): Promise<AuditPage> {
  if (!caller.principal.permissions.includes('*'))
    throw new ApiError('INSUFFICIENT_PERMISSIONS', 'the audit log needs a root key with *')
  const { cursor, limit, action, rootKeyId, apiId, keyId } = input
  return listAuditEntries(deps.store.audit, { action, rootKeyId, apiId, keyId }, { cursor, limit })
}

/**
 * A page of the audit log, newest first, after `cursor`: `limit` entries and a cursor when the page is full (as
 * unfiltered), or, when filtering, what matched among the entries read, with a cursor unless the log ended.
 */
export async function listAuditEntries(
  store: Pick<AuditStore, 'listAudit'>,
  filter: AuditFilter,
  options: { cursor?: string | undefined; limit: number },
): Promise<AuditPage> {
  const { limit } = options
  const wanted = Object.entries(filter).filter(([, value]) => value !== undefined && value !== '') as [
    keyof AuditFilter,
    string,
  ][]
  if (wanted.length === 0) {
    const entries = await store.listAudit({ cursor: options.cursor, limit })
    return { entries, cursor: entries.length === limit ? entries[entries.length - 1]!.id : undefined }
  }
  const matches = (entry: AuditEntry) => wanted.every(([field, value]) => entry[field] === value)
  const found: AuditEntry[] = []
  let cursor = options.cursor
  for (let scanned = 0; scanned < MAX_SCANNED;) {
    const chunk = await store.listAudit({ cursor, limit: CHUNK })
    for (const entry of chunk) {
      if (!matches(entry)) continue
      found.push(entry)
      if (found.length === limit) return { entries: found, cursor: entry.id }
    }
    if (chunk.length < CHUNK) return { entries: found }
    cursor = chunk[chunk.length - 1]!.id
    scanned += chunk.length
  }
  return { entries: found, cursor }
}
