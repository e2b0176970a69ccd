import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { performanceSection, renderedResults, resultsPage } from '../../bench/lib/report.js'
import type { ScenarioReport } from '../../bench/lib/scenario-report.js'

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')

const report = (name: string, title: string, pass: boolean): ScenarioReport & { date: string; commit: string } => ({
  name,
  title,
  command: `npm run bench:${name}`,
  method: 'How it was measured.',
  table: { headers: ['server', 'req/s'], rows: [['keygate', '1,000']] },
  checks: [{ what: 'a ratio', value: 1.2, target: '≥ 1.0', pass }],
  chart: [],
  summary: `${name}: 1.2× | the baseline`,
  date: '2030-01-02',
  commit: 'abc1234',
})

describe('the results pages the bench writes', () => {
  it('are what the stored runs render: generated, never edited by hand', () => {
    const rendered = renderedResults()
    expect(read('bench/RESULTS.md')).toBe(rendered.results)
    expect(read('docs/performance.md')).toBe(rendered.performance)
    expect(read('bench/results.svg')).toBe(rendered.chart)
  })

  it("hold each scenario's latest run once, the judge first, with its command, date, commit and checks", () => {
    const page = resultsPage([report('cpu', 'Server CPU', false), report('verify-hit', '1. Hit', true)], undefined)
    expect(page.match(/^## /gm)).toHaveLength(2)
    expect(page.indexOf('## Server CPU')).toBeLessThan(page.indexOf('## 1. Hit'))
    expect(page).toContain('`npm run bench:cpu` — 2030-01-02, commit abc1234. How it was measured.')
    expect(page).toContain('| a ratio | 1.20 | ≥ 1.0 | **missed** |')
    expect(page).toContain('| a ratio | 1.20 | ≥ 1.0 | met |')
  })

  it("give docs/performance.md the hot path's targets and a line per scenario, between its markers", () => {
    const section = performanceSection([report('cpu', 'Server CPU', true), report('memory', '6. Memory', true)], {
      date: '2030-01-03',
      commit: 'def5678',
      machine: '2 × CPU, 24 GiB, Node v24; pinned',
      command: 'SOAK_SECONDS=180 npm run soak',
      seconds: 180,
      creates: 1,
      verifies: 2,
      disables: 3,
      restarts: 5,
      worstDenyMs: 478,
      lateValid: 0,
      liveHeapMb: { first: [1], last: [1] },
      peakRssMb: [2],
    })
    expect(section.startsWith('<!-- bench:results:start -->')).toBe(true)
    expect(section.endsWith('<!-- bench:results:end -->')).toBe(true)
    expect(section).toContain('**The hot path**, `npm run bench:cpu` on 2030-01-02 (commit abc1234;')
    // A summary's own | does not split the row.
    expect(section).toContain(
      '| 6. Memory | `npm run bench:memory` | 2030-01-02, abc1234, machine not recorded | memory: 1.2× \\| the baseline |',
    )
    expect(section).toContain(
      '| Soak | `SOAK_SECONDS=180 npm run soak` | 2030-01-03, def5678, 2 × CPU, 24 GiB, Node v24 |',
    )
  })
})
