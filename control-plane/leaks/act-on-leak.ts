import { ApiError } from '../../shared/errors/errors.js'
import { failsChecksum } from '../../shared/keys/key-checksum.js'
import { hashKey } from '../../shared/keys/key-material.js'
import type { LeakMark } from '../../shared/leak.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { AuditActor } from '../audit/audit-log.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { apiLeakPolicy } from './api-leak-policy.js'
import type { LeakVerdict } from './leak-verdict.js'

/** A key reported leaked, and where it was seen (as the reporter says). */
export interface LeakReport {
  key: string
  url?: string | undefined
  source?: string | undefined
}

/** Who reported, and whether they may act on the key found (throws the contract's refusal when not). */
export interface LeakReporter {
  actor: AuditActor
  /** `github`, or `rootkey:<id>` (LeakMark.reporter). */
  name: string
  allowed?: (record: KeyRecord) => void
  log: Pick<ControlPlaneDeps['log'], 'warn'>
}

/**
 * Acts on one leaked key as its api's policy says: the key is marked (when, where, by whom, what was done), disabled or
 * deleted, the audit log says so, and the mark's change sends `key.leaked` to webhooks. A string that is no key of
 * ours — a wrong checksum (not even looked up), or no such key — is a false positive and changes nothing. Reported
 * again, a key is marked again (the latest report) and the policy applied again: a key re-enabled by its owner after a
 * leak that leaks again is disabled again.
 */
export async function actOnLeak(
  deps: ControlPlaneDeps,
  reporter: LeakReporter,
  report: LeakReport,
): Promise<LeakVerdict> {
  if (failsChecksum(report.key)) return { label: 'false_positive' }
  const record = await deps.store.keys.getKeyByHash(hashKey(report.key))
  if (!record) return { label: 'false_positive' }
  reporter.allowed?.(record)
  const action = await apiLeakPolicy(deps, record.apiId)
  const leaked: LeakMark = {
    at: deps.clock.now(),
    ...(report.url !== undefined ? { url: report.url } : {}),
    ...(report.source !== undefined ? { source: report.source } : {}),
    reporter: reporter.name,
    action,
  }
  let after: KeyRecord | null
  try {
    // The mark first, in the same write as the disable: a delete then follows, so `key.leaked` is derived from a
    // record that said where it leaked, whatever the policy.
    const write = await deps.writes.updateKey(
      record.id,
      action === 'notify' ? { leaked } : { leaked, enabled: false },
      () => {},
    )
    after = action === 'delete' ? null : write.record
    if (action === 'delete') await deps.writes.deleteKey(record.id)
  } catch (err) {
    // Deleted since it was found: nothing of it is left to protect.
    if (err instanceof ApiError && err.code === 'NOT_FOUND') return { label: 'false_positive' }
    throw err
  }
  reporter.log.warn(
    { keyId: record.id, apiId: record.apiId, action, reporter: reporter.name },
    'key reported leaked: policy applied',
  )
  await deps.audit.append(reporter.actor, 'keys.reportLeak', {
    apiId: record.apiId,
    keyId: record.id,
    before: record,
    after,
    context: { reporter: reporter.name, url: report.url, source: report.source, action },
  })
  return { label: 'true_positive', keyId: record.id, apiId: record.apiId, action }
}
