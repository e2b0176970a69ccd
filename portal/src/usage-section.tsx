import { useEffect, useState } from 'preact/hooks'
import { Select } from '../../console/src/ui/fields.js'
import { useLoad } from '../../console/src/ui/use-load.js'
import { keyLabel } from './key-label.js'
import type { PortalApi } from './portal-api.js'
import type { PortalKey, UsageBucket } from './types.js'
import { UsageChart } from './usage-chart.js'
import { UsageThresholds } from './usage-thresholds.js'

const DAY_MS = 86_400_000
const DAYS = 30
/** The choice of the whole session's usage in the key picker. */
const ALL = ''

const NO_USE = {
  total: 0,
  valid: 0,
  rateLimited: 0,
  insufficientPermissions: 0,
  forbidden: 0,
  disabled: 0,
  expired: 0,
  usageExceeded: 0,
  spentCredits: 0,
}

/**
 * The answer with a zero bucket for each of the 30 days it leaves out: the API fills the days before the last, and
 * gives today's only once it has counts.
 */
function everyDay(buckets: UsageBucket[], startTime: number): UsageBucket[] {
  const times = new Set(buckets.map((bucket) => bucket.time))
  const missing = Array.from({ length: DAYS }, (_, i) => startTime + i * DAY_MS)
    .filter((time) => !times.has(time))
    .map((time) => ({ ...NO_USE, time }))
  return [...buckets, ...missing].sort((a, b) => a.time - b.time)
}

/**
 * Usage over the last 30 days (portal.getVerifications, analytics:read): every key of the session together, or the
 * one picked. Failed loads go to `fail`.
 */
export function UsageSection(props: { api: PortalApi; keys: PortalKey[] | undefined; fail: (err: unknown) => void }) {
  const { api, keys, fail } = props
  const [keyId, setKeyId] = useState(ALL)
  const [now] = useState(() => Date.now())
  const usage = useLoad(async () => {
    // From the start of the UTC day 29 days ago: 30 day buckets, today's last.
    const startTime = Math.floor(now / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS
    const answer = await api.call('getVerifications', {
      startTime,
      endTime: now,
      ...(keyId === ALL ? {} : { keyId }),
    })
    return { keyId, buckets: everyDay(answer.data, startTime) }
  }, [api, keyId, now])
  useEffect(() => {
    if (usage.error !== undefined) fail(usage.error)
  }, [usage.error, fail])
  const picked = keys?.find((key) => key.keyId === keyId)
  // A revoked key's usage cannot be asked for any more: back to every key's.
  useEffect(() => {
    if (keyId !== ALL && keys !== undefined && !picked) setKeyId(ALL)
  }, [keyId, keys, picked])
  const label = `${picked ? keyLabel(picked) : 'All keys'}, last ${DAYS} days`
  // The previous choice's answer is kept while the next loads: drawn under the new label it would be wrong.
  const buckets = usage.data?.keyId === keyId ? usage.data.buckets : undefined
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      {keys && keys.length > 0 ? (
        <Select
          label="Show the usage of"
          value={keyId}
          options={[[ALL, 'All keys'] as const, ...keys.map((key) => [key.keyId, keyLabel(key)] as const)]}
          onChange={setKeyId}
        />
      ) : null}
      {buckets ? (
        <UsageChart buckets={buckets} label={label} />
      ) : (
        <p class="muted">{usage.loading ? 'Loading usage…' : 'Usage could not be loaded.'}</p>
      )}
      <UsageThresholds api={api} fail={fail} />
    </section>
  )
}
