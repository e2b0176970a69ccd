import type { ScenarioReport } from './scenario-report.js'

/**
 * bench/results.svg: per scenario, a bar per thing measured — throughput on the left, p99 on the right, each
 * scaled to the largest in its scenario (so bars compare within a scenario, never across), with the values
 * written out. Plain SVG: no chart library needed for bars and text.
 */
const WIDTH = 960
const LABEL = 250
const BAR = 300
const ROW = 22
const TITLE = 30

const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
const number = (value: number, digits = 0) => value.toLocaleString('en-US', { maximumFractionDigits: digits })

export function renderChart(scenarios: Pick<ScenarioReport, 'title' | 'chart'>[]): string {
  const parts: string[] = []
  let y = 40
  parts.push(`<text x="${LABEL}" y="24" class="h">throughput, req/s (median; line: min–max)</text>`)
  parts.push(`<text x="${LABEL + BAR + 60}" y="24" class="h">p99 latency, ms (median; line: min–max)</text>`)
  for (const scenario of scenarios.filter((s) => s.chart.length > 0)) {
    parts.push(`<text x="8" y="${y + 18}" class="t">${escape(scenario.title)}</text>`)
    y += TITLE
    const maxRps = Math.max(1, ...scenario.chart.map((p) => p.rps?.max ?? 0))
    const maxP99 = Math.max(0.001, ...scenario.chart.map((p) => p.p99Ms?.max ?? 0))
    for (const point of scenario.chart) {
      parts.push(`<text x="${LABEL - 8}" y="${y + 15}" text-anchor="end">${escape(point.label)}</text>`)
      if (point.rps)
        parts.push(
          bar(
            LABEL,
            y,
            point.rps.median / maxRps,
            point.rps.min / maxRps,
            point.rps.max / maxRps,
            'rps',
            number(point.rps.median),
          ),
        )
      if (point.p99Ms)
        parts.push(
          bar(
            LABEL + BAR + 60,
            y,
            point.p99Ms.median / maxP99,
            point.p99Ms.min / maxP99,
            point.p99Ms.max / maxP99,
            'p99',
            number(point.p99Ms.median, 2),
          ),
        )
      y += ROW
    }
    y += 10
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y + 10}" viewBox="0 0 ${WIDTH} ${y + 10}" font-family="sans-serif" font-size="12">`,
    '<style>.t{font-weight:bold;font-size:13px}.h{fill:#555}.rps{fill:#4c78a8}.p99{fill:#f58518}.s{stroke:#222;stroke-width:1}</style>',
    `<rect width="${WIDTH}" height="${y + 10}" fill="white"/>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n')
}

function bar(x: number, y: number, median: number, min: number, max: number, kind: string, text: string): string {
  const w = (f: number) => Math.max(1, f * (BAR - 50)).toFixed(1)
  return [
    `<rect x="${x}" y="${y + 3}" width="${w(median)}" height="14" class="${kind}"/>`,
    `<line x1="${(x + Number(w(min))).toFixed(1)}" x2="${(x + Number(w(max))).toFixed(1)}" y1="${y + 10}" y2="${y + 10}" class="s"/>`,
    `<text x="${(x + Number(w(max)) + 4).toFixed(1)}" y="${y + 15}">${text}</text>`,
  ].join('')
}
