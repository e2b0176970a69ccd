/**
 * Rate limits: fixed windows of `duration` ms aligned to the epoch. `async:false` is exact across verifiers
 * (one Redis script per call); `async:true` (the default) is counted by each verifier in memory and reconciled
 * with Redis every poll interval — zero round trips, at the price of exactness (see the README for the bound).
 */
export interface RateLimitConfig {
  limit: number
  duration: number
  /** Default true. */
  async?: boolean
}

/** A limit to apply to one verification: the key's own (name `key`) or an ad-hoc one from the request. */
export interface AppliedLimit {
  name: string
  limit: number
  duration: number
  async: boolean
  cost: number
}

export type ExactLimit = Pick<AppliedLimit, 'name' | 'limit' | 'duration' | 'cost'>

export interface LimitOutcome {
  ok: boolean
  limit: number
  remaining: number
  /** Unix ms when the window ends. */
  reset: number
}

export function windowStart(duration: number, nowMs: number): number {
  return Math.floor(nowMs / duration) * duration
}
