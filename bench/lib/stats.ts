/** Median of a sample (mean of the middle two for an even count). */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Percentile (nearest rank) of a sample, p in 0..100. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!
}

/** A figure measured over several rounds: its median, and the spread as min–max. */
export interface Measured {
  median: number
  min: number
  max: number
}

export function measured(values: number[]): Measured {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) }
}

/**
 * `top[i] ÷ bottom[i]` for each round i, as a median with its range: a ratio judged round by round, so that a drift
 * of the host between rounds, which moves both, cancels out. `floor` keeps a zero denominator (a p99 of 0 ms) from
 * making the ratio infinite. The two must have a value for every round.
 */
export function roundRatios(top: number[], bottom: number[], floor = 0): RoundRatios {
  if (top.length !== bottom.length || top.length === 0)
    throw new Error(`per-round ratios need one value a round on each side (${top.length} against ${bottom.length})`)
  const byRound = top.map((value, i) => value / Math.max(bottom[i]!, floor))
  return { ...measured(byRound), byRound }
}

/** Per-round ratios: their median and range, and each in round order. */
export interface RoundRatios extends Measured {
  byRound: number[]
}

/**
 * The q-quantile (0..1) of a Prometheus histogram, as PromQL's histogram_quantile estimates it: find the bucket
 * holding the rank and interpolate linearly inside it. `bounds` are the finite upper bounds in order; `cumulative`
 * the counts of observations ≤ each bound, then the total (the +Inf bucket). Past the last finite bound it
 * answers that bound. Used to judge a verifier's histogram against a baseline put through the same buckets.
 */
export function histogramQuantile(q: number, bounds: number[], cumulative: number[]): number {
  const total = cumulative[cumulative.length - 1] ?? 0
  if (total === 0) return NaN
  const rank = q * total
  for (let i = 0; i < bounds.length; i++) {
    if (cumulative[i]! >= rank) {
      const lower = i === 0 ? 0 : bounds[i - 1]!
      const below = i === 0 ? 0 : cumulative[i - 1]!
      const inBucket = cumulative[i]! - below
      return inBucket === 0 ? bounds[i]! : lower + ((bounds[i]! - lower) * (rank - below)) / inBucket
    }
  }
  return bounds[bounds.length - 1]!
}

/** Cumulative bucket counts of raw values, for histogramQuantile (the last entry is the total). */
export function cumulativeCounts(values: number[], bounds: number[]): number[] {
  return [...bounds.map((bound) => values.filter((value) => value <= bound).length), values.length]
}
