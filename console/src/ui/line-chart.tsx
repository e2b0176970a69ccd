import { useEffect, useRef } from 'preact/hooks'
import uPlot from 'uplot'
import 'uplot/dist/uPlot.min.css'
import type { ChartLine } from './chart-line.js'

const COUNT_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 100_000, 1_000_000, 10_000_000]

/**
 * Counts over time, a line each, drawn by uPlot, with each line's total in the legend and the whole said in words
 * (`summary`, for screen readers and tests, under `data-testid` `summaryId`). Without `data` (loading) only the words.
 */
export function LineChart(props: {
  data: { times: number[]; lines: ChartLine[] } | undefined
  summary: string
  summaryId: string
}) {
  const { data } = props
  return (
    <figure class="chart-figure">
      {data ? <Plot times={data.times} lines={data.lines} summary={props.summary} /> : null}
      <figcaption>
        <ul class="legend">
          {data?.lines.map(({ label, colour, counts }) => (
            <li key={label}>
              <Swatch colour={colour} />
              {label}: <strong>{counts.reduce((sum, count) => sum + count, 0).toLocaleString()}</strong>
            </li>
          ))}
        </ul>
        <span class="visually-hidden" data-testid={props.summaryId}>
          {props.summary}
        </span>
      </figcaption>
    </figure>
  )
}

/** A line's colour in the legend: an SVG fill (an attribute, not a style the page's CSP would have to allow). */
export function Swatch({ colour }: { colour: string }) {
  return (
    <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
      <rect width="10" height="10" rx="2" fill={colour} />
    </svg>
  )
}

/** The uPlot canvas: made once per data, resized with its container. */
function Plot(props: { times: number[]; lines: ChartLine[]; summary: string }) {
  const container = useRef<HTMLDivElement>(null)
  useEffect(() => {
    const element = container.current
    if (!element) return
    const plot = new uPlot(
      {
        width: Math.max(element.clientWidth, 300),
        height: 260,
        legend: { show: false },
        // From 0, and at least to 4 (a chart of nothing, or of ones, keeps a scale to read).
        scales: {
          x: { time: true },
          y: { range: (_self, _min, max) => [0, Math.max(Number.isFinite(max) ? max : 0, 4)] },
        },
        series: [
          {},
          ...props.lines.map(({ label, colour }) => ({
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
      [props.times.map((time) => time / 1000), ...props.lines.map((line) => line.counts)],
      element,
    )
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 300), height: 260 }))
    resize.observe(element)
    return () => {
      resize.disconnect()
      plot.destroy()
    }
  }, [props.times, props.lines])
  return <div ref={container} class="chart" role="img" aria-label={props.summary} />
}
