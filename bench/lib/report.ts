import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'
import { fileURLToPath } from 'node:url'
import { canPin, LOAD_CORE, SERVER_CORE } from './cores.js'
import type { Measured } from './stats.js'
import { renderChart } from './chart.js'

/** A target the issue sets, checked against a figure measured in the same run. */
export interface Check {
  what: string
  value: number
  /** e.g. '≥ 0.9' */
  target: string
  pass: boolean
}

/** One bar group in the chart: throughput and/or p99 of one thing measured. */
export interface ChartPoint {
  label: string
  rps?: Measured
  p99Ms?: Measured
}

export interface ScenarioReport {
  name: string
  title: string
  /** The command that produced it. */
  command: string
  /** What was measured, how, in a sentence or two. */
  method: string
  table: { headers: string[]; rows: string[][] }
  checks: Check[]
  chart: ChartPoint[]
  notes?: string[]
  /** Markdown written as is after the notes (e.g. a table of estimates). */
  markdown?: string[]
  /** One line for the end-of-run summary. */
  summary: string
}

const BENCH_DIR = fileURLToPath(new URL('../../../bench/', import.meta.url))
const RESULTS_JSON = `${BENCH_DIR}results/`
const RESULTS_MD = `${BENCH_DIR}RESULTS.md`
const CHART = `${BENCH_DIR}results.svg`
const START = (name: string) => `<!-- bench:${name}:start -->`
const END = (name: string) => `<!-- bench:${name}:end -->`
const SECTION = '## Benchmarks'

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

function renderScenario(report: ScenarioReport, date: string): string {
  const lines = [
    START(report.name),
    `### ${report.title}`,
    '',
    `\`${report.command}\` — ${date}, commit ${measuredCommit()}. ${report.method}`,
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
  lines.push(END(report.name))
  return lines.join('\n')
}

/** Writes the scenario's section of bench/RESULTS.md (replacing an earlier one), its JSON, and the chart. */
export function recordScenario(report: ScenarioReport): void {
  const date = new Date().toISOString().slice(0, 10)
  mkdirSync(RESULTS_JSON, { recursive: true })
  writeFileSync(
    `${RESULTS_JSON}${report.name}.json`,
    `${JSON.stringify({ date, commit: measuredCommit(), machine: machine(), ...report }, null, 2)}\n`,
  )

  let text = existsSync(RESULTS_MD) ? readFileSync(RESULTS_MD, 'utf8') : '# Results\n'
  if (!text.includes(SECTION)) {
    text = `${text.trimEnd()}\n\n${SECTION}\n\nEvery figure is the median over the rounds with the spread (min–max) in brackets, and every ratio is taken between figures measured in the same run. ![throughput and p99 per scenario](results.svg)\n\n<!-- bench:machine -->\n`
  }
  text = text.replace(/<!-- bench:machine -->.*\n/, `<!-- bench:machine -->Last run on: ${machine()}; ${versions()}.\n`)
  const section = renderScenario(report, date)
  const start = text.indexOf(START(report.name))
  const end = text.indexOf(END(report.name))
  if (start >= 0 && end > start) text = text.slice(0, start) + section + text.slice(end + END(report.name).length)
  else {
    // New sections go at the end of the benchmarks part, before any later top-level section.
    const at = text.indexOf('\n## ', text.indexOf(SECTION) + SECTION.length)
    text =
      at < 0 ? `${text.trimEnd()}\n\n${section}\n` : `${text.slice(0, at).trimEnd()}\n\n${section}\n${text.slice(at)}`
  }
  writeFileSync(RESULTS_MD, inScenarioOrder(text))

  const all = readdirSync(RESULTS_JSON)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => JSON.parse(readFileSync(`${RESULTS_JSON}${file}`, 'utf8')) as ScenarioReport)
    .sort((a, b) => Number(/^\d+/.exec(a.title)?.[0] ?? 99) - Number(/^\d+/.exec(b.title)?.[0] ?? 99))
  writeFileSync(CHART, renderChart(all))
}

/** The scenario sections in the order of their numbers ("### 2. …"), wherever each was first written. */
function inScenarioOrder(text: string): string {
  const pattern = /<!-- bench:([\w-]+):start -->[\s\S]*?<!-- bench:\1:end -->/g
  const sections = [...text.matchAll(pattern)].map((m) => m[0])
  if (sections.length < 2) return text
  const number = (section: string) => Number(/^### (\d+)\./m.exec(section)?.[1] ?? 99)
  const sorted = [...sections].sort((a, b) => number(a) - number(b))
  let i = 0
  return text.replace(pattern, () => sorted[i++]!)
}
