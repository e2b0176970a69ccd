const HOUR = 3_600_000
const DAY = 24 * HOUR

/**
 * The periods usage is shown for, each read from the rollup whose buckets it draws: the last 24 hours by hour, the
 * last 30 days by day. `bucket` is a bucket's start in Unix seconds, UTC (the day rollup holds dates), and `since`
 * the lower bound on `time` from a start in Unix seconds: numbers the console makes, never text it was given.
 */
export const RANGES = {
  day: {
    label: 'Last 24 hours',
    table: 'key_verifications_per_hour_v1',
    size: HOUR,
    buckets: 24,
    bucket: 'toUnixTimestamp(time)',
    since: (seconds: number) => `time >= fromUnixTimestamp(${seconds})`,
  },
  month: {
    label: 'Last 30 days',
    table: 'key_verifications_per_day_v1',
    size: DAY,
    buckets: 30,
    bucket: "toUnixTimestamp(toDateTime(time, 'UTC'))",
    since: (seconds: number) => `time >= toDate(fromUnixTimestamp(${seconds}), 'UTC')`,
  },
} as const

export type UsageRange = keyof typeof RANGES

export const RANGE_NAMES = Object.keys(RANGES) as UsageRange[]

/** The starts (Unix ms) of the range's buckets, oldest first, ending with the one `now` is in: UTC hours or days. */
export function bucketTimes(range: UsageRange, now: number): number[] {
  const { size, buckets } = RANGES[range]
  const last = Math.floor(now / size) * size
  return Array.from({ length: buckets }, (_, i) => last - (buckets - 1 - i) * size)
}

/** The range's lower bound on `time`, as SQL: from the start of its first bucket. */
export function sinceOf(range: UsageRange, now: number): string {
  const [first = now] = bucketTimes(range, now)
  return RANGES[range].since(Math.floor(first / 1000))
}
