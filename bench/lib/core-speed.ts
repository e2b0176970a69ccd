import { spawn, type ChildProcessByStdio } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createInterface, type Interface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { pinned } from './cores.js'

/**
 * How fast a core runs now: a fixed piece of work (bench/lib/core-speed-worker.ts) timed in CPU milliseconds by a
 * process pinned to it. On a VM the host's other tenants slow a core down for seconds to minutes at a time — through
 * the caches and memory they share, without taking any of its time — so neither the steal counter nor the quiet check
 * sees it. Measured on 2026-11-27 (an AMD EPYC host, bench/RESULTS.md): the same work took 12–14 ms for a minute, then
 * 25–30 ms for the next, switching abruptly; a server's µs/request moved by up to 1.8× between windows a few seconds
 * apart, and the ceiling's identical twin 0.61–1.10× by round.
 */
export interface CoreSpeedProbe {
  pid: number
  /** The CPU milliseconds of the fixed work now: the median of three runs of it. */
  read(): Promise<number>
  close(): void
}

const RUNS_PER_READING = 3

export function startCoreSpeedProbe(core: number): CoreSpeedProbe {
  // Beside this file once compiled; from the sources (under vitest), the compiled copy in dist/.
  const beside = fileURLToPath(new URL('./core-speed-worker.js', import.meta.url))
  const worker = existsSync(beside)
    ? beside
    : fileURLToPath(new URL('../../dist/bench/lib/core-speed-worker.js', import.meta.url))
  const [command, ...args] = pinned(core, [process.execPath, worker])
  const child: ChildProcessByStdio<Writable, Readable, null> = spawn(command!, args, {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  const lines: Interface = createInterface({ input: child.stdout })
  const waiting: ((line: string) => void)[] = []
  lines.on('line', (line) => waiting.shift()?.(line))
  let failed: Error | undefined
  const fail = (err: Error) => {
    failed = err
    // Each waiting reading sees `failed` and rejects with it.
    for (const answer of waiting.splice(0)) answer('')
  }
  child.on('error', fail)
  child.on('exit', (code) => fail(new Error(`the core-speed probe exited ${code}`)))

  const once = () =>
    new Promise<number>((resolve, reject) => {
      if (failed) return reject(failed)
      waiting.push((line) => {
        const ms = Number(line)
        if (failed || !(ms > 0)) reject(failed ?? new Error(`the core-speed probe answered ${JSON.stringify(line)}`))
        else resolve(ms)
      })
      child.stdin.write('\n')
    })
  return {
    pid: child.pid!,
    async read() {
      const runs: number[] = []
      for (let i = 0; i < RUNS_PER_READING; i++) runs.push(await once())
      return runs.sort((a, b) => a - b)[Math.floor(RUNS_PER_READING / 2)]!
    },
    close() {
      child.removeAllListeners('exit')
      fail(new Error('the core-speed probe was closed'))
      child.kill()
    },
  }
}

export interface CoreSpeedGateOptions {
  /** A reading over this many times the fastest one seen is a slow core. */
  slowFactor: number
  /** How long to wait for the core to come back to full speed before going on anyway. */
  maxWaitMs: number
  /** The pause between readings while waiting. */
  pollMs: number
  sleep?: (ms: number) => Promise<void>
  now?: () => number
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Decides whether the core runs at full speed: the fastest reading seen so far is full speed (a neighbour can only
 * slow the work down), and a reading over `slowFactor` times it is a slow core. Since the fastest reading can only
 * come down, a reading judged at full speed early in a run may be slow by the run's end: `slowdown` judges a reading
 * against the fastest seen until then, and the report judges every window again against the run's fastest.
 */
export class CoreSpeedGate {
  private fastestMs = Infinity

  constructor(
    private readonly read: () => Promise<number>,
    private readonly options: CoreSpeedGateOptions,
  ) {}

  /** The fastest reading so far (ms), Infinity before any. */
  get fastest(): number {
    return this.fastestMs
  }

  /** A reading now, ÷ the fastest one seen so far (this one included): 1 at full speed. */
  async slowdown(): Promise<number> {
    const ms = await this.read()
    this.fastestMs = Math.min(this.fastestMs, ms)
    return ms / this.fastestMs
  }

  isSlow(slowdown: number): boolean {
    return slowdown > this.options.slowFactor
  }

  /**
   * Waits until a reading finds the core at full speed: that reading's slowdown, or the last one's when the wait ran
   * out (over `slowFactor`: the caller goes on, and says so).
   */
  async untilFullSpeed(): Promise<number> {
    const { maxWaitMs, pollMs, sleep = defaultSleep, now = Date.now } = this.options
    const deadline = now() + maxWaitMs
    for (;;) {
      const slowdown = await this.slowdown()
      if (!this.isSlow(slowdown) || now() >= deadline) return slowdown
      await sleep(pollMs)
    }
  }
}
