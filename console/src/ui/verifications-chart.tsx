import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import type { Verifications } from '../generated/console-answers.js'
import { ErrorNote } from './page.js'
import { useLoad } from './use-load.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** The two ranges the chart shows: buckets of keys.getVerifications, ending with the current one. */
const RANGES = {
  day: { label: 'Last 24 hours', granularity: 'hour', size: HOUR, buckets: 24 },
  month: { label: 'Last 30 days', granularity: 'day', size: DAY, buckets: 30 },
} as const
type Range = keyof typeof RANGES

/** A call of keys.getVerifications for the chart's key, with the range's window and buckets. */
export type LoadVerifications = (query: {
  start: number
  end: number
  granularity: (typeof RANGES)[Range]['granularity']
}) => Promise<Verifications>

/** The outcomes getVerifications counts, each with its colour (ui.css has the legend's, `.swatch.<field>`). */
const OUTCOMES = [
  { field: 'success', label: 'Valid', colour: '#166534' },
  { field: 'rateLimited', label: 'Rate limited', colour: '#b45309' },
  { field: 'usageExceeded', label: 'Usage exceeded', colour: '#b91c1c' },
] as const

const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000, 1_000_000, 10_000_000]

/** Every bucket of the range, oldest first, with the API's counts (it leaves out buckets without any). */
export function bucketsOf(answer: Verifications, range: Range, now: number) {
  const { size, buckets } = RANGES[range]
  // Buckets start on UTC hours and days, as the verifier counts them.
  const last = Math.floor(now / size) * size
  const times = Array.from({ length: buckets }, (_, i) => last - (buckets - 1 - i) * size)
  const byTime = new Map(answer.verifications.map((bucket) => [bucket.time, bucket]))
  return {
    times,
    counts: OUTCOMES.map(({ field }) => times.map((time) => byTime.get(time)?.[field] ?? 0)),
  }
}

/**
 * A key's verifications over the last 24 hours or 30 days by outcome (keys.getVerifications, called by `load`, which
 * the page gives: ui/ calls no API itself), drawn by uPlot, with the totals in words beside it for screen readers and
 * tests. A new `load` (another key) loads again.
 */
export function VerificationsChart({ load }: { load: LoadVerifications }) {
  const [range, setRange] = useState<Range>('day')
  const [now] = useState(() => Date.now())
  const answer = useLoad(async () => {
    const { granularity, size, buckets } = RANGES[range]
    const start = Math.floor(now / size) * size - (buckets - 1) * size
    const counts = await load({ start, end: now, granularity })
    return { range, counts }
  }, [load, range, now])
  // useLoad keeps the last answer while the next loads: the other range's, just after a switch. Read into this
  // range's buckets it is wrong (today's day bucket starts at 00:00 UTC, as an hour bucket does: a day's total would
  // be drawn at midnight and summed as the last 24 hours'), so the chart says "loading" until its own answer comes.
  const loaded = answer.data?.range === range ? answer.data.counts : undefined
  const data = useMemo(() => (loaded ? bucketsOf(loaded, range, now) : undefined), [loaded, range, now])
  const totals = data?.counts.map((series) => series.reduce((sum, count) => sum + count, 0))
  const summary = totals
    ? `${RANGES[range].label}: ${OUTCOMES.map(({ label }, i) => `${totals[i]} ${label.toLowerCase()}`).join(', ')}`
    : `${RANGES[range].label}: loading`
  return (
    <section aria-labelledby="verifications-title" class="verifications">
      <h2 id="verifications-title">Verifications</h2>
      <div class="actions" role="group" aria-label="Range">
        {(Object.keys(RANGES) as Range[]).map((name) => (
          <button
            key={name}
            type="button"
            class="secondary"
            aria-pressed={range === name}
            onClick={() => setRange(name)}
          >
            {RANGES[name].label}
          </button>
        ))}
      </div>
      <ErrorNote error={answer.error} />
      <figure class="chart-figure">
        {data ? <Plot times={data.times} counts={data.counts} range={range} summary={summary} /> : null}
        <figcaption>
          <ul class="legend">
            {OUTCOMES.map(({ label, field }, i) => (
              <li key={label}>
                <span class={`swatch ${field}`} aria-hidden="true" />
                {label}: <strong>{totals?.[i] ?? '…'}</strong>
              </li>
            ))}
          </ul>
          <span class="visually-hidden" data-testid="verifications-summary">
            {summary}
          </span>
        </figcaption>
      </figure>
    </section>
  )
}

/** The uPlot canvas: made once per data, resized with its container. */
function Plot(props: { times: number[]; counts: number[][]; range: Range; summary: string }) {
  const container = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = container.current
    if (!element) return
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 300),
        height: 260,
        legend: { show: false },
        scales: { x: { time: true }, y: { range: (_self, _min, max) => [0, Math.max(max, 4)] } },
        series: [
          {},
          ...OUTCOMES.map(({ label, colour }) => ({
            label,
            stroke: colour,
            width: 2,
            points: { show: true, size: 5 },
          })),
        ],
        // Counts are whole: ticks at whole steps only.
        axes: [{ stroke: '#4b5563' }, { stroke: '#4b5563', incrs: COUNT_STEPS }],
      },
      // uPlot's time scale counts seconds.
      [props.times.map((time) => time / 1000), ...props.counts],
      element,
    )
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 300), height: 260 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [props.times, props.counts])
  return <div ref={container} class="chart" role="img" aria-label={props.summary} />
}
