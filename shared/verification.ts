import type { KeyRecord } from './records.js'

/** Verdict codes in the order they are checked (../shared/API.md). */
export type VerdictCode =
  | 'NOT_FOUND' | 'DISABLED' | 'FORBIDDEN' | 'EXPIRED' | 'INSUFFICIENT_PERMISSIONS' | 'RATE_LIMITED'
  | 'USAGE_EXCEEDED' | 'VALID'

export const VERDICT_CODES: readonly VerdictCode[] = [
  'NOT_FOUND', 'DISABLED', 'FORBIDDEN', 'EXPIRED', 'INSUFFICIENT_PERMISSIONS', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'VALID',
]

export interface VerifyRequest {
  apiId?: string
}

export interface Verdict {
  valid: boolean
  code: VerdictCode
  keyId?: string
  name?: string
  ownerId?: string
  meta?: Record<string, unknown>
  enabled?: boolean
  environment?: string
}

const NOT_FOUND: Verdict = Object.freeze({ valid: false, code: 'NOT_FOUND' })

/**
 * The verification rules: one pure function of the record (null = no such key), the request and the clock.
 * Every verifier and the control plane answer through it, so they cannot disagree.
 */
export function verify(record: KeyRecord | null, request: VerifyRequest, _nowMs: number): Verdict {
  if (record === null) return NOT_FOUND
  const code: VerdictCode = !record.enabled
    ? 'DISABLED'
    : request.apiId !== undefined && request.apiId !== record.apiId
      ? 'FORBIDDEN'
      : 'VALID'
  return {
    valid: code === 'VALID',
    code,
    keyId: record.id,
    name: record.name,
    ownerId: record.ownerId,
    meta: record.meta,
    enabled: record.enabled,
    environment: record.environment,
  }
}
