import { benchNodeWarning } from './lib/bench-node.js'
import { recordScenario, writeResults } from './lib/report.js'
import type { ScenarioReport } from './lib/scenario-report.js'
import { analytics } from './scenarios/analytics.js'
import { controlPlane } from './scenarios/control-plane.js'
import { cpu } from './scenarios/cpu.js'
import { cpuHost } from './scenarios/cpu-host.js'
import { instructions } from './scenarios/instructions.js'
import { memory } from './scenarios/memory.js'
import { propagation } from './scenarios/propagation.js'
import { proxy } from './scenarios/proxy.js'
import { tail } from './scenarios/tail.js'
import { unknownFlood } from './scenarios/unknown-flood.js'
import { verifyHit } from './scenarios/verify-hit.js'
import { verifyMiss } from './scenarios/verify-miss.js'

/**
 * `npm run bench` runs every scenario; `npm run bench -- NAME…` (or `npm run bench:NAME`) runs some. Each stores its
 * figures in bench/results/NAME.json as it finishes, then bench/RESULTS.md, bench/results.svg and the results section
 * of docs/performance.md are written anew from every stored run (report.ts); `npm run bench -- report` does only that.
 */
const SCENARIOS: Record<string, () => Promise<ScenarioReport>> = {
  cpu,
  'cpu-host': cpuHost,
  tail,
  'verify-hit': verifyHit,
  instructions,
  'verify-miss': verifyMiss,
  'unknown-flood': unknownFlood,
  propagation,
  proxy,
  memory,
  'control-plane': controlPlane,
  analytics,
}

const names = process.argv.slice(2)
// `npm run bench -- report`: the results pages written anew from the stored runs, nothing measured.
if (names.length === 1 && names[0] === 'report') {
  writeResults()
  process.exit(0)
}
const unknown = names.filter((name) => !(name in SCENARIOS))
if (unknown.length > 0) {
  console.error(`unknown scenario ${unknown.join(', ')}; known: ${Object.keys(SCENARIOS).join(', ')}`)
  process.exit(2)
}
const nodeWarning = benchNodeWarning(process.versions.node)
if (nodeWarning) process.stderr.write(`${nodeWarning}\n`)
const summaries: string[] = []
let failed = false
for (const name of names.length > 0 ? names : Object.keys(SCENARIOS)) {
  process.stderr.write(`bench ${name}\n`)
  try {
    const report = await SCENARIOS[name]!()
    recordScenario(report)
    const missed = report.checks.filter((check) => !check.pass).map((check) => check.what)
    summaries.push(`${name}: ${report.summary}${missed.length ? ` — MISSED: ${missed.join('; ')}` : ''}`)
  } catch (err) {
    failed = true
    summaries.push(`${name}: FAILED ${err instanceof Error ? err.message : String(err)}`)
  }
}
console.log(summaries.join('\n'))
process.exit(failed ? 1 : 0)
