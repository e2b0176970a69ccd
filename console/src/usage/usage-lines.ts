import type { ChartLine } from '../ui/chart-line.js'
import { outcomeLook } from './outcomes.js'
import { RANGES, type UsageRange } from './usage-ranges.js'
import type { UsageSeries } from './usage-series.js'

/** A series as the chart draws it: a line per outcome, in its words and colour. */
export function linesOf(series: UsageSeries): { times: number[]; lines: ChartLine[] } {
  return {
    times: series.times,
    lines: series.outcomes.map(({ code, counts }) => ({ ...outcomeLook(code), counts })),
  }
}

/**
 * A chart's counts in words, for screen readers and tests: "Last 24 hours, tagged "beta": 3 valid, 2 rate limited",
 * every outcome the range holds; "no verifications" for none, "loading" until its own answer came.
 */
export function summaryOf(range: UsageRange, tag: string | undefined, series: UsageSeries | undefined): string {
  const what = `${RANGES[range].label}${tag === undefined ? '' : `, tagged "${tag}"`}`
  if (!series) return `${what}: loading`
  if (series.outcomes.length === 0) return `${what}: no verifications`
  const counts = series.outcomes.map(
    ({ code, total }) => `${total.toLocaleString()} ${outcomeLook(code).label.toLowerCase()}`,
  )
  return `${what}: ${counts.join(', ')}`
}
