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

export const bucketStart = (granularity: Granularity, nowMs: number) => Math.floor(nowMs / BUCKET_MS[granularity]) * BUCKET_MS[granularity]

/** One flushed increment: key, bucket and how many of each outcome. */
export interface UsageIncrement {
  keyId: string
  granularity: Granularity
  time: number
  counts: Partial<Record<Outcome, number>>
}
