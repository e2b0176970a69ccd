import type { Outcome } from '../shared/analytics.js'

/**
 * One key's counts since the last flush, in the table of the hour they belong to. A caller that counts the same key
 * again (a memoised verdict) keeps it and counts on it directly, without a look-up; it stays the key's while `table`
 * is the recorder's current one.
 */
export interface UsageCell {
  success: number
  rateLimited: number
  usageExceeded: number
  /** The table that holds it; undefined once a flush dropped it (idle since the flush before, or of a past hour). */
  table: CountTable | undefined
}

/** One hour's counts, by key id. */
export type CountTable = Map<string, UsageCell>

/** Something that keeps a key's usage cell between verifications. */
export interface UsageCellHolder {
  usage?: UsageCell
}

export function hasCounts(cell: UsageCell): boolean {
  return cell.success + cell.rateLimited + cell.usageExceeded > 0
}

/** The cell's counts, zeroed in it; undefined if it had none. */
export function takeCounts(cell: UsageCell): Partial<Record<Outcome, number>> | undefined {
  if (!hasCounts(cell)) return undefined
  const counts: Partial<Record<Outcome, number>> = {}
  if (cell.success > 0) counts.success = cell.success
  if (cell.rateLimited > 0) counts.rateLimited = cell.rateLimited
  if (cell.usageExceeded > 0) counts.usageExceeded = cell.usageExceeded
  cell.success = cell.rateLimited = cell.usageExceeded = 0
  return counts
}

/** Adds the counts `from` holds to `into`'s (a cell of the same key and hour). */
export function addCounts(into: UsageCell, from: UsageCell): void {
  into.success += from.success
  into.rateLimited += from.rateLimited
  into.usageExceeded += from.usageExceeded
}
