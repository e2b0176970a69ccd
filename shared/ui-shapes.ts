/**
 * The shapes the admin console and the customer portal read, declared once. shared/ uses them from here (the modules
 * named on each re-export them), and `npm run build` (scripts/bundle-page.mjs) copies this file as it is into
 * console/src/generated/ and portal/src/generated/: the pages import no server code, and a copy made by hand would
 * drift. Hence it imports nothing (the build refuses a copy that imports what is not copied beside it). What each
 * page's API answers is in console-answers.ts and portal-answers.ts, which build on these.
 */

/** Every event type an endpoint can subscribe to. */
export const WEBHOOK_EVENT_TYPES = [
  'key.created',
  'key.updated',
  'key.deleted',
  'key.rerolled',
  'key.expiring',
  'key.expired',
  'key.credits.low',
  'key.credits.exhausted',
  'key.leaked',
  'identity.created',
  'identity.updated',
  'identity.deleted',
  'rootKey.created',
  'rootKey.revoked',
  'rootKey.rolled',
  'usage.hourly',
  'usage.daily',
  'usage.threshold',
] as const

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number]

/** What a usage threshold counts: billable verifications (each api's billableOutcomes) or credits spent. */
export const USAGE_MEASURES = ['billable', 'credits'] as const
export type UsageMeasure = (typeof USAGE_MEASURES)[number]

/** The period a usage threshold's usage is counted over, in UTC: the current day or month. */
export const USAGE_PERIODS = ['day', 'month'] as const
export type UsagePeriod = (typeof USAGE_PERIODS)[number]

/** An identity's or a key's usage threshold: crossed once its usage in the period reaches `value`. */
export interface UsageThreshold {
  measure: UsageMeasure
  period: UsagePeriod
  value: number
}

/** What a session may do, as Unkey's `portal.*` names it; `keys:revoke` is Keygate's own. */
export const PORTAL_SCOPES = ['keys:read', 'keys:create', 'keys:reroll', 'keys:revoke', 'analytics:read'] as const
export type PortalScope = (typeof PORTAL_SCOPES)[number]

/** A key's credits refill: to `amount` at the start of each UTC day, or each month on `refillDay`. */
export interface Refill {
  interval: 'daily' | 'monthly'
  amount: number
  /** Monthly only; default 1. */
  refillDay?: number
}

/** A key's rate limit: `limit` calls per fixed window of `duration` ms; `async` counted per verifier. */
export interface RateLimitConfig {
  limit: number
  duration: number
  /** Default true. */
  async?: boolean
}

/** A rate limit an identity (or a key) carries by name; verifyKey's `ratelimits[]` refer to it by that name. */
export interface NamedRateLimit {
  name: string
  limit: number
  /** Window length, ms. */
  duration: number
  /** Applied to every verification without being asked for by name. */
  autoApply?: boolean
  /** Counted by each verifier and reconciled (true), or exactly in the store (false, the default: Unkey's). */
  async?: boolean
}

/** notify: only mark the key (and send `key.leaked`); disable: also stop it verifying; delete: also delete it. */
export const LEAK_POLICIES = ['notify', 'disable', 'delete'] as const
export type LeakPolicy = (typeof LEAK_POLICIES)[number]

/** When and where a key was reported leaked, by whom, and what was done (KeyRecord.leaked). */
export interface LeakMark {
  /** When the report arrived, unix ms. */
  at: number
  /** Where the key was found (a commit's file on GitHub, a paste…), as the reporter said. */
  url?: string
  /** What kind of place (GitHub: `content`, `commit`, `npm`…), as the reporter said. */
  source?: string
  /** `github` for GitHub's secret scanning; `rootkey:<id>` for keys.reportLeak. */
  reporter: string
  /** The api's policy as it was applied. */
  action: LeakPolicy
}

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

/**
 * v1's error body, the same on every path (shared/http/error-body.ts builds it): the error table's code, or a gateway
 * refusal's, whose `docs` link leads to its page.
 */
export interface ErrorBody<Code extends string = string> {
  error: { code: Code; message: string; docs: string; requestId: string }
}

/** One failed check of a request, as v2's 400 lists them: where (`body.apiId`) and what is wrong. */
export interface FieldProblem {
  location: string
  message: string
}

/**
 * Unkey v2's error body (RFC 7807 in an envelope; shared/http/problem-body.ts renders it), a 400 adding the checks
 * that failed.
 */
export interface ProblemBody {
  meta: { requestId: string }
  error: { title: string; detail: string; status: number; type: string; errors?: FieldProblem[] }
}
