import { runLoad, type LoadPlan, type LoadResult } from './load.js'
import { measured, median, type Measured } from './stats.js'

export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5)
export const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 2)
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64)
/**
 * Requests in flight per connection. With one, a 2-core machine's round trips set the pace and the server idles
 * for part of each whatever it is; four keep it busy without deep queues (which would promote every
 * request's garbage and measure the collector instead).
 */
export const PIPELINING = Number(process.env.BENCH_PIPELINING ?? 4)

/** One thing measured: a run of the given length gives one LoadResult. */
export interface Contender {
  label: string
  run(durationSeconds: number, warmUp: boolean): Promise<LoadResult>
}

/** A contender driven by autocannon (CONNECTIONS connections unless the plan says otherwise). */
export function loadContender(
  label: string,
  plan: Omit<LoadPlan, 'durationSeconds' | 'connections'> & Partial<Pick<LoadPlan, 'connections'>>,
): Contender {
  return {
    label,
    run: (durationSeconds, _warmUp) =>
      runLoad({ connections: CONNECTIONS, pipelining: PIPELINING, ...plan, durationSeconds }),
  }
}

export interface RoundResults {
  /** Per contender, one LoadResult per round. */
  byLabel: Map<string, LoadResult[]>
  rps(label: string): Measured
  p50(label: string): Measured
  p99(label: string): Measured
  /** The median over rounds of the per-round ratio a/b of a figure: paired in time, so drift cancels. */
  ratio(a: string, b: string, figure: 'rps' | 'p99'): number
}

export const progress = (text: string) => process.stderr.write(`  ${text}\n`)

/**
 * Warms every contender up, then runs ROUNDS rounds of SECONDS each, the contenders interleaved within a round
 * (and their order rotated between rounds) so that a slow minute on a shared machine hits all of them alike.
 * Any non-2xx answer or socket error fails the run: a fast wrong answer is not a result.
 */
export async function runRounds(
  contenders: Contender[],
  options: { allowNon2xx?: boolean } = {},
): Promise<RoundResults> {
  const byLabel = new Map<string, LoadResult[]>(contenders.map((c) => [c.label, []]))
  for (const contender of contenders) {
    progress(`warm-up ${contender.label} (${WARMUP_SECONDS} s)`)
    const warm = await contender.run(WARMUP_SECONDS, true)
    if (warm.errors > 0 || (warm.non2xx > 0 && !options.allowNon2xx)) {
      throw new Error(`${contender.label}: ${warm.non2xx} non-2xx answers and ${warm.errors} errors while warming up`)
    }
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = contenders.map((_, i) => contenders[(i + round) % contenders.length]!)
    for (const contender of order) {
      const result = await contender.run(SECONDS, false)
      progress(
        `round ${round + 1}/${ROUNDS} ${contender.label}: ${Math.round(result.rps)} req/s, p99 ${result.p99} ms${result.non2xx ? `, ${result.non2xx} non-2xx` : ''}`,
      )
      if (result.errors > 0 || (result.non2xx > 0 && !options.allowNon2xx)) {
        throw new Error(
          `${contender.label}: ${result.non2xx} non-2xx answers and ${result.errors} errors in round ${round + 1}`,
        )
      }
      byLabel.get(contender.label)!.push(result)
    }
  }
  const of = (label: string) => byLabel.get(label) ?? []
  return {
    byLabel,
    rps: (label) => measured(of(label).map((r) => r.rps)),
    p50: (label) => measured(of(label).map((r) => r.p50)),
    p99: (label) => measured(of(label).map((r) => r.p99)),
    ratio: (a, b, figure) => median(of(a).map((r, i) => r[figure] / of(b)[i]![figure])),
  }
}
