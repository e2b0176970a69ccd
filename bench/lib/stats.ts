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
