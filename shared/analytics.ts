/** Per-key verification counts, by hour and by day (UTC), as keys.getVerifications reports them. */
export type Outcome = 'success' | 'rateLimited' | 'usageExceeded'

export interface Bucket {
  /** Unix ms of the bucket's start. */
  time: number
  success: number
  rateLimited: number
  usageExceeded: number
}

export type Granularity = 'hour' | 'day'
export const BUCKET_MS: Record<Granularity, number> = { hour: 3_600_000, day: 86_400_000 }
/** How long counts are kept. */
export const ANALYTICS_RETENTION_MS = 90 * 86_400_000

export const bucketStart = (granularity: Granularity, nowMs: number) =>
  Math.floor(nowMs / BUCKET_MS[granularity]) * BUCKET_MS[granularity]

/** Start times of the buckets from the one holding `from` to `to`, at most `max` of them. */
export function bucketTimes(granularity: Granularity, from: number, to: number, max = 1_000): number[] {
  const first = bucketStart(granularity, from)
  const count = Math.min(max, Math.max(0, Math.floor((to - first) / BUCKET_MS[granularity]) + 1))
  return Array.from({ length: count }, (_, i) => first + i * BUCKET_MS[granularity])
}

/** One flushed increment: key, bucket and how many of each outcome. */
export interface UsageIncrement {
  keyId: string
  granularity: Granularity
  time: number
  counts: Partial<Record<Outcome, number>>
}
