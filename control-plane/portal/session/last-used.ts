import { ANALYTICS_RETENTION_MS, BUCKET_MS } from '../../../shared/analytics.js'
import type { UsageStore } from '../../../shared/store/usage/usage-store.js'

/**
 * When a key was last verified, to the hour (the start of the latest hour with counts), or undefined if not within
 * the counts' retention. Keygate records no time per verification (that would be a write on every one): the usage
 * buckets say it well enough for people. Two reads: the latest day with counts, then its hours.
 */
export async function lastUsedAt(
  usage: Pick<UsageStore, 'readUsage'>,
  keyId: string,
  now: number,
): Promise<number | undefined> {
  const days = await usage.readUsage(keyId, 'day', now - ANALYTICS_RETENTION_MS, now)
  const day = days.at(-1)
  if (!day) return undefined
  const hours = await usage.readUsage(keyId, 'hour', day.time, Math.min(now, day.time + BUCKET_MS.day - 1))
  return hours.at(-1)?.time ?? day.time
}
