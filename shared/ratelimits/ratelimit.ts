/**
 * Rate limits: fixed windows of `duration` ms aligned to the epoch. `async:false` is exact across verifiers
 * (one Redis script per call); `async:true` is counted by each verifier in memory and reconciled with Redis every
 * poll interval — zero round trips, at the price of exactness (see the README for the bound).
 */
export type { RateLimitConfig } from '../ui-shapes.js'

/**
 * Whose calls a limit counts: a key's (its hash, standard base64, which never holds a `_`) or an identity's, every
 * key of it (its id, `id_…`). A call's counters are grouped the same way: every counter one call touches lives in
 * its group's slot, the identity's when the key has one, so that one script reaches them all on a Redis Cluster.
 */
export type CounterOwner = string

/** Whether an owner (or group) is an identity rather than a key. */
export const isIdentityOwner = (owner: CounterOwner) => owner.includes('_')

/** A limit to apply to one verification, with its cost and the owner of its counter. */
export interface AppliedLimit {
  name: string
  limit: number
  duration: number
  async: boolean
  cost: number
  owner: CounterOwner
  /** A stored limit applied to every call without being named (v2's answer says so). */
  autoApply?: boolean
}

export type ExactLimit = Pick<AppliedLimit, 'name' | 'limit' | 'duration' | 'cost' | 'owner'>

/** One window counter: in the slot of `group`, counting `owner`'s calls against the limit `name`. */
export interface RateCounter {
  group: CounterOwner
  owner: CounterOwner
  name: string
  duration: number
  window: number
}

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
