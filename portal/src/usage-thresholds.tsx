import { useEffect } from 'preact/hooks'
import { useLoad } from '../../console/src/ui/use-load.js'
import type { PortalApi } from './portal-api.js'
import type { PortalThreshold } from './types.js'

const MEASURE_WORDS = { billable: 'billable verifications', credits: 'credits spent' } as const
const PERIOD_WORDS = { day: 'today (UTC)', month: 'this month (UTC)' } as const

const count = (n: number) => n.toLocaleString('en-US')

/** "3,200 of 10,000 billable verifications this month (UTC)". */
export const thresholdLine = (threshold: PortalThreshold) =>
  `${count(threshold.usage)} of ${count(threshold.value)} ${MEASURE_WORDS[threshold.measure]} ` +
  PERIOD_WORDS[threshold.period]

/**
 * The customer's usage thresholds (portal.getUsageThresholds), each as a meter of its usage in the current day or
 * month: how near each is, as the alerts count it. Nothing when there are none; failed loads go to `fail`.
 */
export function UsageThresholds(props: { api: PortalApi; fail: (err: unknown) => void }) {
  const { api, fail } = props
  const thresholds = useLoad(async () => (await api.call('getUsageThresholds')).data, [api])
  useEffect(() => {
    if (thresholds.error !== undefined) fail(thresholds.error)
  }, [thresholds.error, fail])
  const listed = thresholds.data ?? []
  if (listed.length === 0) return null
  return (
    <section aria-labelledby="thresholds-title">
      <h3 id="thresholds-title">Your plan's thresholds</h3>
      <ul class="thresholds">
        {listed.map((threshold) => {
          const line = thresholdLine(threshold)
          return (
            <li key={`${threshold.measure}-${threshold.period}-${threshold.value}`}>
              <span>{line}</span>
              <meter
                min={0}
                max={threshold.value}
                value={Math.min(threshold.usage, threshold.value)}
                aria-label={line}
              />
            </li>
          )
        })}
      </ul>
    </section>
  )
}
