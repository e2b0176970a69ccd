/**
 * Usage thresholds: an identity's or a key's absolute amounts of usage in the current UTC day or month — billable
 * verifications (each api's billableOutcomes) or credits spent — whose crossing is sent once per period as the webhook
 * event `usage.threshold` (control-plane/webhooks/usage/usage-alerts.ts). Kept in the identity's or key's record;
 * every record holding some is listed in USAGE_THRESHOLD_INDEX so that the alerts read only those.
 */

import { USAGE_MEASURES, USAGE_PERIODS, type UsageMeasure, type UsagePeriod, type UsageThreshold } from './ui-shapes.js'

export { USAGE_MEASURES, USAGE_PERIODS, type UsageMeasure, type UsagePeriod, type UsageThreshold }

/** Thresholds a record holds, at most. */
export const MAX_USAGE_THRESHOLDS = 10

/** The entity index listing every identity and key that holds thresholds (members: usageSubjectMember). */
export const USAGE_THRESHOLD_INDEX = 'usage-threshold'

/** Whose usage a threshold is on: an identity (by its externalId) or a key. */
export type UsageSubject = { identity: string } | { keyId: string }

/** A subject as USAGE_THRESHOLD_INDEX lists it. */
export const usageSubjectMember = (subject: UsageSubject): string =>
  'identity' in subject ? `identity:${subject.identity}` : `key:${subject.keyId}`

/** The subject an index member names; undefined for a member no writer makes. */
export function usageSubjectOf(member: string): UsageSubject | undefined {
  if (member.startsWith('identity:')) return { identity: member.slice('identity:'.length) }
  if (member.startsWith('key:')) return { keyId: member.slice('key:'.length) }
  return undefined
}

/** The UTC period `period` holding `at` (Unix ms): its start (inclusive) and end (exclusive). */
export function usagePeriodAt(period: UsagePeriod, at: number): { start: number; end: number } {
  const day = new Date(at)
  if (period === 'day') {
    const start = Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate())
    return { start, end: start + 86_400_000 }
  }
  return {
    start: Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), 1),
    end: Date.UTC(day.getUTCFullYear(), day.getUTCMonth() + 1, 1),
  }
}

/** Thresholds as stored: one of each (measure, period, value), in a stable order. */
export function normalisedThresholds(thresholds: readonly UsageThreshold[]): UsageThreshold[] {
  const seen = new Map<string, UsageThreshold>()
  for (const { measure, period, value } of thresholds)
    seen.set(`${measure}|${period}|${value}`, { measure, period, value })
  return [...seen.values()].sort(
    (a, b) => a.measure.localeCompare(b.measure) || a.period.localeCompare(b.period) || a.value - b.value,
  )
}
