import type { VerdictCode } from '../../shared/verification/verification.js'

/** Verifications by outcome (as verifyKey answers them), and their total. */
export interface VerificationCounts {
  valid: number
  rateLimited: number
  usageExceeded: number
  disabled: number
  expired: number
  forbidden: number
  insufficientPermissions: number
  notFound: number
  total: number
}

/** Usage for billing, over a period or a range: what usage summaries and usage events carry. */
export interface Usage {
  verifications: VerificationCounts
  /** Verifications of the outcomes each one's api bills (its `billableOutcomes`; VALID by default). */
  billable: number
  /** Credits the verifications spent. */
  spentCredits: number
}

/** Where each outcome is counted. */
export const OUTCOME_FIELD: Record<VerdictCode, Exclude<keyof VerificationCounts, 'total'>> = {
  VALID: 'valid',
  RATE_LIMITED: 'rateLimited',
  USAGE_EXCEEDED: 'usageExceeded',
  DISABLED: 'disabled',
  EXPIRED: 'expired',
  FORBIDDEN: 'forbidden',
  INSUFFICIENT_PERMISSIONS: 'insufficientPermissions',
  NOT_FOUND: 'notFound',
}

export const noUsage = (): Usage => ({
  verifications: {
    valid: 0,
    rateLimited: 0,
    usageExceeded: 0,
    disabled: 0,
    expired: 0,
    forbidden: 0,
    insufficientPermissions: 0,
    notFound: 0,
    total: 0,
  },
  billable: 0,
  spentCredits: 0,
})

/**
 * Adds `count` verifications answered `outcome`, which spent `credits`, to `usage`: billable when `billed` (their
 * api's billable outcomes) holds the outcome. An outcome this version does not know counts in the total only.
 */
export function addVerifications(
  usage: Usage,
  outcome: string,
  count: number,
  credits: number,
  billed: ReadonlySet<string>,
): void {
  const field = OUTCOME_FIELD[outcome as VerdictCode] as (typeof OUTCOME_FIELD)[VerdictCode] | undefined
  if (field !== undefined) usage.verifications[field] += count
  if (billed.has(outcome)) usage.billable += count
  usage.verifications.total += count
  usage.spentCredits += credits
}
