import { TableScroll } from '../../console/src/ui/table-scroll.js'
import type { UsageBucket } from './types.js'

/** Buckets are UTC days, as the verifier counts them: said as such, whatever the browser's zone. */
const DAY = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' })
const dayOf = (time: number) => DAY.format(new Date(time))

/** A bucket's verifications that were refused, whatever the reason. */
const refused = (bucket: UsageBucket) => bucket.total - bucket.valid
/** Refusals the table does not give a column of their own. */
const otherRefused = (bucket: UsageBucket) =>
  bucket.insufficientPermissions + bucket.forbidden + bucket.disabled + bucket.expired

const count = (value: number) => value.toLocaleString()

/** The chart's drawing box: a bar per bucket, scaled to the busiest (SVG units; CSS sets the size on screen). */
const WIDTH = 300
const HEIGHT = 100

/**
 * Verifications per day as stacked bars (valid below, refused above), in SVG that the page's CSP allows and
 * classes colour. A screen reader hears the totals (the chart is one image named by them), and every day's counts
 * are in a table beside it.
 */
export function UsageChart({ buckets, label }: { buckets: UsageBucket[]; label: string }) {
  const total = buckets.reduce((sum, bucket) => sum + bucket.total, 0)
  const valid = buckets.reduce((sum, bucket) => sum + bucket.valid, 0)
  const busiest = Math.max(0, ...buckets.map((bucket) => bucket.total))
  const slot = WIDTH / Math.max(1, buckets.length)
  const height = (value: number) => (value / Math.max(1, busiest)) * HEIGHT
  const summary = `${label}: ${count(total)} verifications, ${count(valid)} valid, ${count(total - valid)} refused`
  const first = buckets[0]
  const last = buckets[buckets.length - 1]
  return (
    <figure class="usage">
      <svg
        class="usage-bars"
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        preserveAspectRatio="none"
        role="img"
        aria-label={summary}
      >
        <line class="axis" x1="0" y1={HEIGHT} x2={WIDTH} y2={HEIGHT} />
        {buckets.map((bucket, i) => (
          <g key={bucket.time}>
            <rect
              class="valid"
              x={i * slot + slot * 0.15}
              width={slot * 0.7}
              y={HEIGHT - height(bucket.valid)}
              height={height(bucket.valid)}
            />
            <rect
              class="refused"
              x={i * slot + slot * 0.15}
              width={slot * 0.7}
              y={HEIGHT - height(bucket.total)}
              height={height(refused(bucket))}
            />
          </g>
        ))}
      </svg>
      <div class="usage-scale" aria-hidden="true">
        <span>{first ? dayOf(first.time) : ''}</span>
        <span>busiest day: {count(busiest)}</span>
        <span>{last ? dayOf(last.time) : ''}</span>
      </div>
      <figcaption>
        {total === 0 ? <p class="muted">No verifications in these {buckets.length} days.</p> : null}
        <ul class="legend">
          <li>
            <span class="swatch valid" aria-hidden="true" />
            Valid: <strong>{count(valid)}</strong>
          </li>
          <li>
            <span class="swatch refused" aria-hidden="true" />
            Refused: <strong>{count(total - valid)}</strong>
          </li>
        </ul>
      </figcaption>
      <details>
        <summary>Show each day as a table</summary>
        <TableScroll label={`${label}, by day`}>
          <table>
            <caption class="visually-hidden">{`${label}, by day`}</caption>
            <thead>
              <tr>
                <th scope="col">Day (UTC)</th>
                <th scope="col">Total</th>
                <th scope="col">Valid</th>
                <th scope="col">Rate limited</th>
                <th scope="col">Usage exceeded</th>
                <th scope="col">Other refusals</th>
              </tr>
            </thead>
            <tbody>
              {buckets.map((bucket) => (
                <tr key={bucket.time}>
                  <th scope="row">{dayOf(bucket.time)}</th>
                  <td>{count(bucket.total)}</td>
                  <td>{count(bucket.valid)}</td>
                  <td>{count(bucket.rateLimited)}</td>
                  <td>{count(bucket.usageExceeded)}</td>
                  <td>{count(otherRefused(bucket))}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      </details>
    </figure>
  )
}
