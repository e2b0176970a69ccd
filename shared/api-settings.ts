import { entityAddress } from './entity.js'
import type { LeakPolicy } from './leak.js'
import type { VerdictCode } from './verification/verification.js'

/**
 * An api's settings: the one place each is kept (not in the api's record), as an entity at `api:<apiId>`, so that each
 * write bumps its shard's revision and is logged, and verifiers cache it under the revocation bound as they cache
 * roles. An api that sets nothing has no entity. A verifier reads `ipAllowlist` (folded into each key's resolved
 * context: shared/verification/verify-context.ts) and nothing else of it.
 */
export interface ApiSettings {
  /** The addresses every key of the api may be verified from: normalised ranges, never empty (absent: any). */
  ipAllowlist?: string[]
  /** Absent: DEFAULT_LEAK_POLICY. */
  leakPolicy?: LeakPolicy
  /** The outcomes of a verification that usage counts as billable (analytics.getUsage), never empty; absent: VALID. */
  billableOutcomes?: VerdictCode[]
}

/** What usage counts as billable for an api that does not say. */
export const DEFAULT_BILLABLE_OUTCOMES: readonly VerdictCode[] = ['VALID']

export const apiSettingsAddress = (apiId: string) => entityAddress('api', apiId)
