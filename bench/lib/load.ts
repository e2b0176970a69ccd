import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { LOAD_CORE, pinned } from './cores.js'

/** What one autocannon run sends. */
export interface LoadPlan {
  url: string
  path: string
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  /** Request bodies, rotated through in order by every connection. */
  bodies?: string[]
  /** Header sets rotated through in order instead of `headers` (e.g. one X-API-Key per key). */
  headerSets?: Record<string, string>[]
  /** A fresh random `{ key }` body on every request instead. */
  randomKeys?: boolean
  connections: number
  /**
   * Requests each connection keeps in flight (HTTP pipelining), so that the server, not the round trip, sets the pace.
   */
  pipelining?: number
  durationSeconds: number
  /** Requests per second across all connections (open-loop), else as fast as the server answers. */
  overallRate?: number
}

/** Latencies in ms. */
export interface LoadResult {
  rps: number
  p50: number
  p99: number
  max: number
  total: number
  non2xx: number
  errors: number
  /** The paced client's slow requests one by one, when its plan asks for them (bench/lib/paced-worker.ts). */
  slow?: SlowRequests
}

/** The requests of a window slower than `overMs`, each with the time it was written; times in ms since the epoch. */
export interface SlowRequests {
  overMs: number
  /** The counted part of the schedule (the warm-up excluded). */
  fromEpochMs: number
  toEpochMs: number
  sentAtEpochMs: number[]
  latencyMs: number[]
}

/** Runs autocannon in a process of its own, pinned to the load core. */
export function runLoad(plan: LoadPlan): Promise<LoadResult> {
  return runPinnedWorker('load-worker', plan)
}

/** Runs bench/lib/NAME.ts (compiled) pinned to the load core with `plan` in a file; its stdout is its JSON result. */
export async function runPinnedWorker<T>(name: string, plan: unknown, nodeFlags: string[] = []): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'keygate-bench-'))
  const file = join(dir, 'plan.json')
  writeFileSync(file, JSON.stringify(plan))
  try {
    // Beside this file once compiled; from the sources (under vitest), the compiled copy in dist/.
    const beside = fileURLToPath(new URL(`./${name}.js`, import.meta.url))
    const worker = existsSync(beside)
      ? beside
      : fileURLToPath(new URL(`../../dist/bench/lib/${name}.js`, import.meta.url))
    const [command, ...args] = pinned(LOAD_CORE, [process.execPath, ...nodeFlags, worker, file])
    const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    let stdout = ''
    child.stdout.on('data', (chunk) => (stdout += String(chunk)))
    // 'close', not 'exit': only then has all of stdout been read.
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    if (code !== 0) throw new Error(`${name} exited ${code}`)
    return JSON.parse(stdout) as T
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
