/**
 * Usage credits: a key with `remaining` succeeds that many times (each verification spends its cost,
 * default 1), globally across verifiers. A refill resets the balance to `amount` at the start of each UTC
 * day, or each month on `refillDay` (1–31; the month's last day when it is shorter), as Unkey does.
 */
import type { Refill } from '../ui-shapes.js'

export type { Refill }

const DAY_MS = 86_400_000

/** The most recent refill moment at or before `nowMs` (unix ms, UTC). */
export function lastRefillBoundary(refill: Refill, nowMs: number): number {
  if (refill.interval === 'daily') return Math.floor(nowMs / DAY_MS) * DAY_MS
  const now = new Date(nowMs)
  const day = refill.refillDay ?? 1
  const inMonth = (year: number, month: number) => {
    const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
    return Date.UTC(year, month, Math.min(day, last))
  }
  const thisMonth = inMonth(now.getUTCFullYear(), now.getUTCMonth())
  return thisMonth <= nowMs ? thisMonth : inMonth(now.getUTCFullYear(), now.getUTCMonth() - 1)
}

/** The largest balance a key can hold: well inside exact integers in Lua and JSON. */
export const MAX_CREDITS = 1_000_000_000_000

export type CreditOp = 'increment' | 'decrement' | 'set' | 'take'

/** What spending credits answered: whether it succeeded, and the balance after it. */
export interface Spend {
  ok: boolean
  remaining: number
}
