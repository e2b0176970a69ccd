import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { canPin, LOAD_CORE, SERVER_CORE } from './cores.js'
import type { Measured } from './stats.js'
import { renderChart } from './chart.js'
import type { ScenarioReport } from './scenario-report.js'
import { packageRoot } from '../../shared/package-root.js'

const ROOT = packageRoot()
const BENCH_DIR = fileURLToPath(new URL('bench/', ROOT))
const RESULTS_JSON = `${BENCH_DIR}results/`
const RESULTS_MD = `${BENCH_DIR}RESULTS.md`
const CHART = `${BENCH_DIR}results.svg`
const PERFORMANCE_MD = fileURLToPath(new URL('docs/performance.md', ROOT))
const START = (name: string) => `<!-- bench:${name}:start -->`
const END = (name: string) => `<!-- bench:${name}:end -->`

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  const pinning = canPin
    ? `servers pinned to core ${SERVER_CORE}, load generator to core ${LOAD_CORE} (taskset)`
    : 'no pinning (one core or no taskset)'
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; ${pinning}`
}

function versions(): string {
  const lock = JSON.parse(readFileSync(`${BENCH_DIR}../package-lock.json`, 'utf8')) as {
    packages: Record<string, { version?: string }>
  }
  const version = (name: string) => lock.packages[`node_modules/${name}`]?.version ?? '?'
  return ['fastify', 'ioredis', 'lru-cache', 'undici', 'autocannon']
    .map((name) => `${name} ${version(name)}`)
    .join(', ')
}

const fmt = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
/**
 * A check's measured value to two places — or to as many more (up to five) as it takes not to print the bound
 * itself: 1.0049 against "≤ 1.0" missed, and a table saying "1.00 … missed" reads as a contradiction. The bound is
 * the target's first number ("< 1,000": 1000); the figure is compared as printed (toLocaleString rounds 0.995 up,
 * toFixed down).
 */
export function checkFigure(value: number, target: string): string {
  const numeric = (text: string) => Number(text.replace(/,/g, ''))
  const bound = numeric(/\d[\d,]*(\.\d+)?/.exec(target)?.[0] ?? 'NaN')
  let digits = 2
  while (digits < 5 && value !== bound && numeric(fmt(value, digits)) === bound) digits++
  return fmt(value, digits)
}

/** "47,120 (46,800–47,900)": the median and the spread over the rounds. */
export function showMeasured(m: Measured, digits = 0): string {
  return m.min === m.max
    ? fmt(m.median, digits)
    : `${fmt(m.median, digits)} (${fmt(m.min, digits)}–${fmt(m.max, digits)})`
}

/**
 * The commit measured, and whether the code differed from it: targets must hold in runs of one commit on different
 * days, so each run says which. The bench's own outputs (RESULTS.md, results/, the chart) do not count as changes.
 */
export function measuredCommit(): string {
  return COMMIT_AT_START
}

// Read when the bench starts (this module is loaded with it), not when results are written 10+ minutes later: a
// checkout or commit meanwhile would name code that was not measured.
const COMMIT_AT_START = readCommit()

function readCommit(): string {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
    const commit = git('rev-parse', '--short', 'HEAD').trim()
    const changed = git('status', '--porcelain')
      .split('\n')
      .filter((line) => line.trim() && !/ bench\/(RESULTS\.md|results\/|results\.svg)/.test(line))
    return changed.length ? `${commit} with uncommitted changes` : commit
  } catch {
    return 'an unknown commit (not a git checkout)'
  }
}

function renderScenario(report: StoredScenario): string {
  const run = [report.date, report.commit && `commit ${report.commit}`, report.machine, report.versions]
    .filter(Boolean)
    .join(', ')
  const lines = [
    `## ${report.title}`,
    '',
    `\`${report.command}\` — ${run}. ${report.method}`,
    '',
    `| ${report.table.headers.join(' | ')} |`,
    `|${report.table.headers.map(() => '---').join('|')}|`,
    ...report.table.rows.map((row) => `| ${row.join(' | ')} |`),
    '',
  ]
  if (report.checks.length > 0) {
    lines.push('| target | measured | wanted | |', '|---|---|---|---|')
    for (const check of report.checks)
      lines.push(
        `| ${check.what} | ${checkFigure(check.value, check.target)} | ${check.target} | ${check.pass ? 'met' : '**missed**'} |`,
      )
    lines.push('')
  }
  for (const note of report.notes ?? []) lines.push(`- ${note}`)
  if (report.notes?.length) lines.push('')
  if (report.markdown?.length) lines.push(...report.markdown, '')
  return lines.join('\n').trimEnd()
}

/** The soak's latest run (bench/soak.test.ts), as it records it beside the scenarios' JSON. */
export interface SoakReport {
  date: string
  commit: string
  machine: string
  command: string
  seconds: number
  creates: number
  verifies: number
  disables: number
  restarts: number
  worstDenyMs: number
  lateValid: number
  /** Each verifier's live heap a third of the way in and at the end, MB. */
  liveHeapMb: { first: number[]; last: number[] }
  peakRssMb: number[]
}

const SOAK_JSON = `${RESULTS_JSON}soak.json`

/** Stores the scenario's figures, then writes bench/RESULTS.md, the chart and docs/performance.md's results anew. */
export function recordScenario(report: ScenarioReport): void {
  const date = new Date().toISOString().slice(0, 10)
  mkdirSync(RESULTS_JSON, { recursive: true })
  writeFileSync(
    `${RESULTS_JSON}${report.name}.json`,
    `${JSON.stringify({ date, commit: measuredCommit(), machine: machine(), versions: versions(), ...report }, null, 2)}\n`,
  )
  writeResults()
}

/** Stores the soak's latest run, then writes bench/RESULTS.md and docs/performance.md's results anew. */
export function recordSoak(soak: Omit<SoakReport, 'date' | 'commit' | 'machine'>): void {
  mkdirSync(RESULTS_JSON, { recursive: true })
  const record: SoakReport = {
    date: new Date().toISOString().slice(0, 10),
    commit: measuredCommit(),
    machine: machine(),
    ...soak,
  }
  writeFileSync(SOAK_JSON, `${JSON.stringify(record, null, 2)}\n`)
  writeResults()
}

type StoredScenario = ScenarioReport & { date: string; commit?: string; machine?: string; versions?: string }

/** The scenarios as the results list them: the judge of the hot path and its explanations first, then by number. */
const SCENARIO_ORDER = [
  'cpu',
  'cpu-host',
  'tail',
  'verify-hit',
  'instructions',
  'verify-miss',
  'unknown-flood',
  'propagation',
  'proxy',
  'memory',
  'control-plane',
  'analytics',
]
const placeOf = (name: string) => (SCENARIO_ORDER.includes(name) ? SCENARIO_ORDER.indexOf(name) : SCENARIO_ORDER.length)

/** Every scenario's latest run, in SCENARIO_ORDER (any other after them, by name). */
function storedScenarios(): StoredScenario[] {
  if (!existsSync(RESULTS_JSON)) return []
  return readdirSync(RESULTS_JSON)
    .filter((file) => file.endsWith('.json') && file !== 'soak.json')
    .sort()
    .map((file) => JSON.parse(readFileSync(`${RESULTS_JSON}${file}`, 'utf8')) as StoredScenario)
    .sort((a, b) => placeOf(a.name) - placeOf(b.name))
}

/** "2 × AMD EPYC, 24 GiB, Node v24.21.0": the machine without the pinning, for a table's cell. */
const machineOf = (run: { machine?: string }) => run.machine?.split(';')[0] ?? 'machine not recorded'

const storedSoak = (): SoakReport | undefined =>
  existsSync(SOAK_JSON) ? (JSON.parse(readFileSync(SOAK_JSON, 'utf8')) as SoakReport) : undefined

/**
 * bench/RESULTS.md, the chart and the results section of docs/performance.md, written from the stored runs (the
 * latest of each scenario and of the soak): generated output, never edited by hand. Runs of earlier code are in git.
 */
export function writeResults(): void {
  const pages = renderedResults()
  writeFileSync(RESULTS_MD, pages.results)
  writeFileSync(PERFORMANCE_MD, pages.performance)
  writeFileSync(CHART, pages.chart)
}

/** What writeResults writes to bench/RESULTS.md, docs/performance.md and the chart, from the stored runs. */
export function renderedResults(): { results: string; performance: string; chart: string } {
  const scenarios = storedScenarios()
  const soak = storedSoak()
  const page = readFileSync(PERFORMANCE_MD, 'utf8')
  const start = page.indexOf(START('results'))
  const end = page.indexOf(END('results'))
  if (start < 0 || end < start) throw new Error(`docs/performance.md has no ${START('results')} … ${END('results')}`)
  return {
    chart: renderChart(scenarios),
    results: resultsPage(scenarios, soak),
    performance: `${page.slice(0, start)}${performanceSection(scenarios, soak)}${page.slice(end + END('results').length)}`,
  }
}

export function resultsPage(scenarios: StoredScenario[], soak: SoakReport | undefined): string {
  return [
    '# Benchmark results',
    '',
    '<!-- Written by the bench (bench/lib/report.ts) from bench/results/*.json: run a scenario to change it. -->',
    '',
    'The latest run of each scenario (`npm run bench`, or `npm run bench:<scenario>`) and of the soak, each with its',
    'command, date, commit and machine. Every figure is the median over the rounds with the spread (min–max) in',
    'brackets, and every ratio is taken between figures measured in the same run. How each scenario measures:',
    '[README.md](README.md); what the figures mean for a deployment: [docs/performance.md](../docs/performance.md).',
    '',
    '![throughput and p99 per scenario](results.svg)',
    '',
    ...(soak ? [soakSection(soak), ''] : []),
    ...scenarios.map((report) => `${renderScenario(report)}\n`),
  ].join('\n')
}

function soakSection(soak: SoakReport): string {
  const mb = (values: number[]) => values.map((value) => Math.round(value)).join('/')
  return [
    '## Soak',
    '',
    `\`${soak.command}\` — ${soak.date}, commit ${soak.commit}, ${soak.machine}. A control plane and two verifiers on one` +
      ' Redis with AOF, writes, verifications and disables throughout, Redis SIGKILLed and restarted every 30 s. The' +
      ' live heap is exact (heap snapshots a third of the way in and at the end); peak RSS includes pages the allocator' +
      ' keeps and the snapshots themselves.',
    '',
    "| length | creates | verifies | disables | Redis restarts | worst disable→deny | valid past the bound | verifiers' live heap, ⅓ in → end | verifiers' peak RSS |",
    '|---|---|---|---|---|---|---|---|---|',
    `| ${soak.seconds} s | ${soak.creates} | ${soak.verifies} | ${soak.disables} | ${soak.restarts} | ${soak.worstDenyMs} ms | ${soak.lateValid} | ${mb(soak.liveHeapMb.first)} → ${mb(soak.liveHeapMb.last)} MB | ${mb(soak.peakRssMb)} MB |`,
  ].join('\n')
}

/** docs/performance.md's results: the hot path's targets as the latest bench:cpu measured them, then every scenario. */
export function performanceSection(scenarios: StoredScenario[], soak: SoakReport | undefined): string {
  const lines = [
    START('results'),
    '<!-- Written by the bench (bench/lib/report.ts): run it to change this part. -->',
    '',
  ]
  const cpu = scenarios.find((report) => report.name === 'cpu')
  if (cpu) {
    lines.push(
      `**The hot path**, \`${cpu.command}\` on ${cpu.date} (commit ${cpu.commit ?? 'unknown'}; ${cpu.machine ?? 'machine unknown'}):`,
      '',
      '| target | measured | wanted | |',
      '|---|---|---|---|',
      ...cpu.checks.map(
        (check) =>
          `| ${check.what} | ${checkFigure(check.value, check.target)} | ${check.target} | ${check.target.startsWith('(') ? '' : check.pass ? 'met' : '**missed**'} |`,
      ),
      '',
    )
  }
  lines.push(
    '**Every scenario**, its latest run (details: [bench/RESULTS.md](../bench/RESULTS.md)):',
    '',
    '| scenario | command | run | result |',
    '|---|---|---|---|',
    ...scenarios.map(
      (report) =>
        `| ${report.title} | \`${report.command}\` | ${[report.date, report.commit ?? 'commit not recorded', machineOf(report)].join(', ')} | ${report.summary.replace(/\|/g, '\\|')} |`,
    ),
    ...(soak
      ? [
          `| Soak | \`${soak.command}\` | ${[soak.date, soak.commit, machineOf(soak)].join(', ')} | ${soak.seconds} s, ${soak.restarts} Redis restarts: worst disable→deny ${soak.worstDenyMs} ms, ${soak.lateValid} valid answers past the bound |`,
        ]
      : []),
    '',
    END('results'),
  )
  return lines.join('\n')
}
