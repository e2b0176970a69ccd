import { byOutcomeOrder } from './outcomes.js'
import { bucketTimes, RANGES, type UsageRange } from './usage-ranges.js'

/** A row of the analytics route: its columns by name. */
export type AnalyticsRow = Record<string, unknown>

/** Verifications per bucket of a range, a line per outcome, and each outcome's total. */
export interface UsageSeries {
  /** Bucket starts, Unix ms, oldest first: every bucket of the range, those without verifications too. */
  times: number[]
  /** Only the outcomes the range holds, in the console's order. */
  outcomes: { code: string; counts: number[]; total: number }[]
}

/** A column read as a count: the route answers 64-bit integers as numbers; anything else counts as none. */
export function countOf(value: unknown): number {
  const count = Number(value)
  return Number.isFinite(count) ? count : 0
}

/**
 * The rows of a per-bucket count (`bucket` in Unix seconds, `outcome`, `verifications`) on every bucket of the range
 * ending at `now`. A row is put in the bucket its time falls in, so that an engine whose rollups start hours in another
 * time zone still lands in the right one; a row outside the range is left out.
 */
export function seriesOf(rows: AnalyticsRow[], range: UsageRange, now: number): UsageSeries {
  const { size } = RANGES[range]
  const times = bucketTimes(range, now)
  const index = new Map(times.map((time, i) => [time, i]))
  const counts = new Map<string, number[]>()
  for (const row of rows) {
    const at = index.get(Math.floor((countOf(row.bucket) * 1000) / size) * size)
    if (at === undefined) continue
    const code = String(row.outcome)
    const line = counts.get(code) ?? times.map(() => 0)
    line[at] = (line[at] ?? 0) + countOf(row.verifications)
    counts.set(code, line)
  }
  const outcomes = [...counts]
    .map(([code, line]) => ({ code, counts: line, total: line.reduce((sum, count) => sum + count, 0) }))
    .filter((outcome) => outcome.total > 0)
    .sort((a, b) => byOutcomeOrder(a.code, b.code))
  return { times, outcomes }
}
