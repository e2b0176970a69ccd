import type { CreditRule } from '../key-fields.js'

/** The keys domain's rules on credits as Unkey's v2 words them, in its field names. */
export const V2_CREDIT_WORDING: Readonly<Record<CreditRule, { field: string; problem: string }>> = {
  'refill-needs-credits': {
    field: 'credits.remaining',
    problem: 'must be given (not null) when credits.refill is set',
  },
  'refill-day-only-monthly': {
    field: 'credits.refill.refillDay',
    problem: 'must not be given when the refill interval is daily',
  },
  'monthly-refill-names-day': {
    field: 'credits.refill.refillDay',
    problem: 'must be given when the refill interval is monthly',
  },
  'threshold-needs-credits': {
    field: 'credits.lowThreshold',
    problem: 'only for a key with credits (remaining): a key without them has no balance to watch',
  },
}
