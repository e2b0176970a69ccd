import type { LoadResult } from './load.js'
import { mayRunOn, othersShareSince, processCpuSeconds, waitForQuiet } from './process-cpu.js'
import { SERVER_CORE } from './cores.js'
import { measured, roundRatios, type Measured, type RoundRatios } from './stats.js'
import { progress } from './rounds.js'

export const CPU_ROUNDS = Number(process.env.BENCH_CPU_ROUNDS ?? 6)
export const CPU_SECONDS = Number(process.env.BENCH_CPU_SECONDS ?? 8)
const WINDOW_WARMUP_SECONDS = Number(process.env.BENCH_CPU_WINDOW_WARMUP_SECONDS ?? 1)
/** A window in which processes not under test took more of the server core than this is measured again. */
const MAX_FOREIGN_SHARE = 0.1
const MAX_REMEASURES = 2

/** One thing measured by CPU: the server processes it runs in, and a load that exercises it. */
export interface CpuContender {
  label: string
  /** Whose CPU is this contender's (the server or proxy under test): µs/request is theirs over the window. */
  pids: number[]
  /** Processes it needs running (Redis, an upstream): never paused while it is measured, and not charged to it. */
  needs?: number[]
  /** A URL answering 200 once the contender can serve again after being paused (a verifier re-confirms its cache). */
  readyUrl?: string
  run(durationSeconds: number): Promise<LoadResult>
}

export interface CpuSample {
  cpuUsPerRequest: number
  result: LoadResult
  /** The round started on a machine that never became quiet within the wait. */
  notQuiet: boolean
}

export interface CpuRoundResults {
  samples: Map<string, CpuSample[]>
  cpu(label: string): Measured
  rps(label: string): Measured
  p50(label: string): Measured
  p99(label: string): Measured
  /** Median over rounds of b's CPU per request ÷ a's: ≥ 1 means a costs no more CPU per request than b. */
  cheaperBy(a: string, b: string): RoundRatios
  /** Median over rounds of a's p99 ÷ b's (a p99 under 1 µs counted as 1 µs): ≤ 1 means a's tail is no longer. */
  p99By(a: string, b: string): RoundRatios
  notQuietWindows: number
  remeasured: number
  /** Windows kept though others still took over a tenth of the server core after every remeasure. */
  noisyWindows: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function signal(pids: number[], name: 'SIGSTOP' | 'SIGCONT'): void {
  for (const pid of pids) {
    try {
      process.kill(pid, name)
    } catch {
      // Gone already: nothing to pause or resume.
    }
  }
}

async function untilReady(url: string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return
    } catch {
      // Not listening yet.
    }
    await sleep(20)
  }
  throw new Error(`${url} did not become ready after being resumed`)
}

/**
 * The order of a round's windows: the contenders' list rotated by the round's number, so that each takes every place in
 * turn — and each `mirrored` group (labels of contenders judged against each other by adjacent windows: the verifier's
 * hit and the ceiling's saturated windows, the fixed-rate p99s) in the list's order in even rounds and reversed in odd
 * ones, in the same places. Rotation alone keeps neighbours in one order in every round but the one where it wraps them
 * apart, and that order is not neutral: the first of consecutive paced windows can have the better p99 whichever server
 * it is, so each must be first as often as the other. A group must name contenders in the list and share none with
 * another group: a typo would silently leave a pair unmirrored, and a later group could undo an earlier one's order.
 */
export function roundOrder<T extends { label: string }>(
  contenders: readonly T[],
  round: number,
  mirrored: readonly (readonly string[])[] = [],
): T[] {
  const labels = new Set(contenders.map((contender) => contender.label))
  const grouped = new Set<string>()
  for (const label of mirrored.flat()) {
    if (!labels.has(label)) throw new Error(`mirrored: no contender is labelled ${JSON.stringify(label)}`)
    if (grouped.has(label)) throw new Error(`mirrored: ${JSON.stringify(label)} is named twice`)
    grouped.add(label)
  }
  const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!)
  for (const group of mirrored) {
    const places = order.flatMap((contender, i) => (group.includes(contender.label) ? [i] : []))
    const inListOrder = contenders.filter((contender) => group.includes(contender.label))
    const filling = round % 2 === 0 ? inListOrder : [...inListOrder].reverse()
    places.forEach((place, k) => (order[place] = filling[k]!))
  }
  return order
}

/**
 * Server CPU per request, the judge of hot-path work: every contender is warmed up, then measured CPU_ROUNDS times
 * for CPU_SECONDS, interleaved with their order rotated between rounds (and each `mirrored` group's order reversed
 * every other round: roundOrder). While one is measured, every other
 * process in `pausable` is stopped (SIGSTOP), so nothing but the contender and what it needs runs on the server
 * core; each window starts only once the machine has been quiet for a second, and a window in which anything else
 * took more than a tenth of the server core is measured again. µs/request = the contender's processes'
 * utime+stime over the window ÷ the responses in it. Any non-2xx answer or socket error fails the run.
 */
export async function runCpuRounds(
  contenders: CpuContender[],
  pausable: number[],
  { warmUpSeconds = 3, mirrored = [] }: { warmUpSeconds?: number; mirrored?: readonly (readonly string[])[] } = {},
): Promise<CpuRoundResults> {
  const samples = new Map<string, CpuSample[]>(contenders.map((c) => [c.label, []]))
  let notQuietWindows = 0
  let remeasured = 0
  let noisyWindows = 0

  const isolate = async (contender: CpuContender) => {
    const keep = new Set([...contender.pids, ...(contender.needs ?? [])])
    signal(
      pausable.filter((pid) => !keep.has(pid)),
      'SIGSTOP',
    )
    signal([...keep], 'SIGCONT')
    if (contender.readyUrl) await untilReady(contender.readyUrl)
  }
  const check = (contender: CpuContender, result: LoadResult, when: string) => {
    if (result.errors > 0 || result.non2xx > 0)
      throw new Error(`${contender.label}: ${result.non2xx} non-2xx answers and ${result.errors} errors ${when}`)
  }

  try {
    for (const contender of contenders) {
      await isolate(contender)
      progress(`warm-up ${contender.label} (${warmUpSeconds} s)`)
      check(contender, await contender.run(warmUpSeconds), 'while warming up')
    }
    for (let round = 0; round < CPU_ROUNDS; round++) {
      for (const contender of roundOrder(contenders, round, mirrored)) {
        await isolate(contender)
        for (let attempt = 0; ; attempt++) {
          const quiet = await waitForQuiet()
          if (WINDOW_WARMUP_SECONDS > 0)
            check(contender, await contender.run(WINDOW_WARMUP_SECONDS), 'while warming up')
          // What ran on the server core besides the contender and what it needs (the load generator is elsewhere).
          // Only what may run there is taken off its busy time: a need pinned elsewhere (the upstream, on the load
          // core) would otherwise hide what else ran there.
          const charged = [...contender.pids, ...(contender.needs ?? []).filter((pid) => mayRunOn(pid, SERVER_CORE))]
          const cpuOf = (pids: number[]) => pids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0)
          const [ownBefore, othersShare] = [cpuOf(contender.pids), othersShareSince(SERVER_CORE, charged)]
          const result = await contender.run(CPU_SECONDS)
          const [ownAfter, share] = [cpuOf(contender.pids), othersShare()]
          check(contender, result, `in round ${round + 1}`)
          if (share > MAX_FOREIGN_SHARE && attempt < MAX_REMEASURES) {
            remeasured++
            progress(
              `round ${round + 1} ${contender.label}: others took ${(share * 100).toFixed(0)}% of the core; again`,
            )
            continue
          }
          if (share > MAX_FOREIGN_SHARE) noisyWindows++
          if (!quiet) notQuietWindows++
          const cpuUsPerRequest = ((ownAfter - ownBefore) * 1e6) / result.total
          samples.get(contender.label)!.push({ cpuUsPerRequest, result, notQuiet: !quiet })
          progress(
            `round ${round + 1}/${CPU_ROUNDS} ${contender.label}: ${cpuUsPerRequest.toFixed(1)} µs/request, ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`,
          )
          break
        }
      }
    }
  } finally {
    signal(pausable, 'SIGCONT')
  }
  const of = (label: string) => samples.get(label) ?? []
  return {
    samples,
    cpu: (label) => measured(of(label).map((s) => s.cpuUsPerRequest)),
    rps: (label) => measured(of(label).map((s) => s.result.rps)),
    p50: (label) => measured(of(label).map((s) => s.result.p50)),
    p99: (label) => measured(of(label).map((s) => s.result.p99)),
    cheaperBy: (a, b) =>
      roundRatios(
        of(b).map((s) => s.cpuUsPerRequest),
        of(a).map((s) => s.cpuUsPerRequest),
      ),
    p99By: (a, b) =>
      roundRatios(
        of(a).map((s) => s.result.p99),
        of(b).map((s) => s.result.p99),
        0.001,
      ),
    notQuietWindows,
    remeasured,
    noisyWindows,
  }
}

/** Whether the windows started on a quiet machine, and how many were measured again or kept noisy: for the report. */
export function windowsNote(results: CpuRoundResults): string {
  const started =
    results.notQuietWindows > 0
      ? `${results.notQuietWindows} window(s) started on a machine that did not become quiet within 2 minutes; `
      : 'Every window started on a quiet machine; '
  const noisy =
    results.noisyWindows > 0
      ? ` ${results.noisyWindows} window(s) were kept though others still took over 10% of it after two remeasures.`
      : ''
  return `${started}${results.remeasured} were measured again because anything else (other processes, interrupts, the host) took over 10% of the server core.${noisy}`
}
