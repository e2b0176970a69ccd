import { entityAddress } from './entity.js'

/** What a GitHub-style leak report does to a key of the api (control-plane's leak reports read it). */
export const LEAK_POLICIES = ['notify', 'disable', 'delete'] as const
export type LeakPolicy = (typeof LEAK_POLICIES)[number]
/** The policy of an api that sets none. */
export const DEFAULT_LEAK_POLICY: LeakPolicy = 'disable'

/**
 * An api's settings: the one place each is kept (not in the api's record), as an entity at `api:<apiId>`, so that each
 * write bumps its shard's revision and is logged, and verifiers cache it under the revocation bound as they cache
 * roles. An api that sets nothing has no entity. A verifier reads `ipAllowlist` (folded into each key's resolved
 * context: shared/verify-context.ts) and nothing else of it.
 */
export interface ApiSettings {
  /** The addresses every key of the api may be verified from: normalised ranges, never empty (absent: any). */
  ipAllowlist?: string[]
  /** Absent: DEFAULT_LEAK_POLICY. */
  leakPolicy?: LeakPolicy
}

export const apiSettingsAddress = (apiId: string) => entityAddress('api', apiId)
