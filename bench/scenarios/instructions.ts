import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import autocannon from 'autocannon'
import { onStage } from '../lib/keygate-fixture.js'
import { benchServer, KEYGATE_CLI, startServer, type BenchProcess } from '../lib/processes.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { progress } from '../lib/rounds.js'

const KEYS = 1_000
const PATH = '/v1/keys.verifyKey'
const WARM_UP = Number(process.env.BENCH_INSTRUCTIONS_WARMUP ?? 10_000)
const MEASURED = Number(process.env.BENCH_INSTRUCTIONS_REQUESTS ?? 10_000)
const IDLE_SECONDS = Number(process.env.BENCH_INSTRUCTIONS_IDLE_SECONDS ?? 30)

/**
 * valgrind and callgrind_control find each other through a file named after LOGNAME and HOST as each sees them
 * (HOST is also the servers' listen address): both get the same.
 */
const VGDB_NAMING = { LOGNAME: 'keygate-bench', HOST: '127.0.0.1' }

/** Instructions executed by a process (all its threads) between two callgrind dumps: the dump resets the counts. */
function dumpTotal(pid: number, dir: string): number {
  const before = new Set(readdirSync(dir))
  const said = execFileSync('callgrind_control', ['--dump', String(pid)], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', ...VGDB_NAMING },
  })
  const dumped = readdirSync(dir).filter((file) => !before.has(file))
  if (dumped.length !== 1)
    throw new Error(`callgrind wrote ${dumped.length} files on a dump (${[...before].join(', ')}): ${said}`)
  const totals = /^(?:totals|summary):\s+(\d+)/m.exec(readFileSync(join(dir, dumped[0]!), 'utf8'))
  if (!totals) throw new Error('no totals in the callgrind dump')
  return Number(totals[1])
}

async function send(url: string, bodies: string[], amount: number): Promise<void> {
  const result = await autocannon({
    url,
    amount,
    connections: 8,
    pipelining: 1,
    timeout: 60,
    requests: bodies.map((body) => ({
      method: 'POST' as const,
      path: PATH,
      headers: { 'content-type': 'application/json' },
      body,
    })),
  })
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} non-2xx and ${result.errors} errors`)
}

/**
 * Instructions per verifyKey, counted by valgrind's callgrind: a second view of the gap between the verifier and
 * the ceiling, in work rather than req/s. Each server runs under callgrind (~50× slower), is warmed up, then the
 * instructions of every thread of the process over the measured requests, less its idle rate (work done by the
 * clock) times their duration, are divided by their number. It counts work, not time: cache misses, syscalls'
 * kernel side and waiting are not in it. V8 itself is driven by time (concurrent compilation and marking, heap
 * sizing, code flushing), so the counts are not exact: repeat runs of one server do not agree, a shorter warm-up gives
 * larger counts, and variants run side by side can disagree widely. Good for the size of a gap, not for telling apart
 * changes of a few percent.
 */
export async function instructions(): Promise<ScenarioReport> {
  return onStage(KEYS, async ({ fixture, keys, onStop }) => {
    const bodies = keys.map(({ key }) => JSON.stringify({ key }))
    const contenders: [string, { args: string[]; env: Record<string, string>; nodeFlags?: string[] }][] = [
      ['node:http, JSON.parse, constant answer (the floor)', { args: [benchServer('raw-http')], env: {} }],
      ['ceiling: bare fastify, constant answer', { args: [benchServer('ceiling')], env: {} }],
      ['keygate verifier (cache hit)', { args: [KEYGATE_CLI, 'verifier'], env: fixture.env }],
      // The same verifier recording nothing for analytics (servers/recording-off.ts): recording's cost in work.
      [
        'keygate verifier (cache hit), recording off',
        { args: [KEYGATE_CLI, 'verifier'], env: fixture.env, nodeFlags: ['--import', benchServer('recording-off')] },
      ],
    ]
    const perRequest = new Map<string, { raw: number; perRequest: number; idlePerSecond: number }>()
    // BENCH_INSTRUCTIONS_ONLY=text measures only the contenders whose label contains it (to compare variants).
    const only = process.env.BENCH_INSTRUCTIONS_ONLY
    for (const [label, { args, env, nodeFlags }] of contenders.filter(
      ([label]) => only === undefined || label.includes(only),
    )) {
      // BENCH_CALLGRIND_DIR keeps the dumps (for callgrind_annotate); otherwise they go with the run.
      const keep = process.env.BENCH_CALLGRIND_DIR
      const dir = mkdtempSync(join(keep ?? tmpdir(), 'keygate-callgrind-'))
      if (!keep) onStop(async () => rmSync(dir, { recursive: true, force: true }))
      progress(`${label}: starting under callgrind`)
      const server: BenchProcess = await startServer({
        args,
        ...(nodeFlags ? { nodeFlags } : {}),
        env: { ...env, ...VGDB_NAMING },
        readyTimeoutMs: 300_000,
        // JIT code is written and rewritten at run time: callgrind must check for it everywhere but in files. A
        // server relaunches itself with a node flag (cli/server-relaunch.ts): callgrind follows the exec.
        wrap: [
          'valgrind',
          '--tool=callgrind',
          '--trace-children=yes',
          '--smc-check=all-non-file',
          `--callgrind-out-file=${join(dir, 'cg.out')}`,
        ],
      })
      onStop(() => server.stop())
      progress(`${label}: ${WARM_UP} warm-up requests`)
      await send(server.url, bodies, WARM_UP)
      dumpTotal(server.child.pid!, dir)
      progress(`${label}: ${MEASURED} measured requests`)
      const started = performance.now()
      await send(server.url, bodies, MEASURED)
      const busy = dumpTotal(server.child.pid!, dir)
      const busySeconds = (performance.now() - started) / 1000
      // Work done by the clock, not per request (revision polls, usage flushes, event-loop sampling) is ~50×
      // over-represented under valgrind, which makes every request ~50× slower: measure its rate while idle and
      // take it out.
      progress(`${label}: ${IDLE_SECONDS} s idle`)
      const idleStarted = performance.now()
      await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000))
      const idlePerSecond = dumpTotal(server.child.pid!, dir) / ((performance.now() - idleStarted) / 1000)
      perRequest.set(label, {
        raw: busy / MEASURED,
        perRequest: (busy - idlePerSecond * busySeconds) / MEASURED,
        idlePerSecond,
      })
      await server.stop()
    }
    if (only !== undefined) {
      const measured = [...perRequest]
        .map(
          ([label, count]) =>
            `${label}: ${(count.perRequest / 1000).toFixed(1)}k (raw ${(count.raw / 1000).toFixed(1)}k, idle ${(count.idlePerSecond / 1e6).toFixed(1)}M/s)`,
        )
        .join('; ')
      throw new Error(`only some contenders measured (BENCH_INSTRUCTIONS_ONLY), nothing recorded: ${measured}`)
    }
    const [floor, ceiling, verifier] = [...perRequest.values()].map((count) => count.perRequest) as [
      number,
      number,
      number,
    ]
    const ratio = ceiling / verifier
    const thousands = (value: number) => `${(value / 1000).toFixed(1)}k`
    return {
      name: 'instructions',
      title: '1b. verifyKey, instructions per request (callgrind)',
      command: 'npm run bench:instructions',
      method: `Each server under valgrind --tool=callgrind; ${WARM_UP.toLocaleString('en-US')} warm-up requests, then ${MEASURED.toLocaleString('en-US')} measured, ${KEYS} keys rotated, 8 connections. Instructions of all the process's threads over the measured requests, less what the process does per second when idle (timers: polls, flushes, metrics sampling) times the seconds they took, ÷ their number.`,
      table: {
        headers: [
          'contender',
          'instructions per request',
          '× the floor',
          'before taking out idle work',
          'idle, per second',
        ],
        rows: [...perRequest].map(([label, count]) => [
          label,
          thousands(count.perRequest),
          (count.perRequest / floor).toFixed(2),
          thousands(count.raw),
          `${(count.idlePerSecond / 1e6).toFixed(1)}M`,
        ]),
      },
      checks: [
        {
          what: 'ceiling ÷ keygate, instructions per request (the work-only form of "≥ 0.9× the ceiling")',
          value: ratio,
          target: '≥ 0.9',
          pass: ratio >= 0.9,
        },
      ],
      chart: [],
      notes: [
        'Not exact (V8 is driven by time as well as work): repeat runs of the verifier agreed within 1–6%; a shorter warm-up gives larger counts. It sizes the gap; it does not resolve changes of a few percent.',
      ],
      summary: `instructions: keygate verifier ${thousands(verifier)} per request, ceiling ${thousands(ceiling)} (${ratio.toFixed(2)}×), node:http floor ${thousands(floor)}`,
    }
  })
}
