/**
 * What a change of a key's credit balance tells the webhooks: `low` when it drops to or below the key's
 * `creditsLowThreshold`, `exhausted` when it reaches 0. Written by the spend (and keys.updateCredits) in the same
 * atomic step as the balance, into a capped log in the key's shard, which the webhooks' deriver reads.
 */
export type CreditNoticeKind = 'low' | 'exhausted'

/** Who the balance belongs to, given by whoever spends or changes it, and the key's threshold. */
export interface CreditNotice {
  keyId: string
  apiId: string
  lowThreshold?: number | undefined
}

/** A notice as the log keeps it: `id` orders the notices of a shard (a stream id on Redis). */
export interface CreditNoticeEntry {
  id: string
  kind: CreditNoticeKind
  keyId: string
  apiId: string
  /** The balance after the change. */
  remaining: number
  /** The threshold crossed (`low` only). */
  threshold?: number
}

/** Notices each shard's log keeps (approximately, on Redis). */
export const CREDIT_NOTICES_MAX_LEN = 10_000

/**
 * The notices a balance going from `before` to `after` makes: `low` when it crosses the threshold going down, and
 * `exhausted` when it reaches 0 from above. A balance going up (a refill, an increment) makes none. The Redis credit
 * scripts (redis-scripts.ts) apply the same rule.
 */
export function creditNoticeKinds(before: number, after: number, threshold: number | undefined): CreditNoticeKind[] {
  if (after >= before) return []
  const kinds: CreditNoticeKind[] = []
  if (threshold !== undefined && before > threshold && after <= threshold) kinds.push('low')
  if (after === 0) kinds.push('exhausted')
  return kinds
}

/**
 * What the credit scripts publish on the change channel when they log a notice: `{"v":1,"notice":<shard>}`, a hint
 * that the shard's notice log has news (at most once, like every published message: the log stays the truth). It is
 * no change event: verifiers pass it over.
 */
export function parseCreditNoticeHint(text: string): number | undefined {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  const hint = value as { v?: unknown; notice?: unknown } | null
  if (typeof hint !== 'object' || hint === null || hint.v !== 1 || !Number.isSafeInteger(hint.notice)) return undefined
  return hint.notice as number
}
