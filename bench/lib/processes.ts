import { spawn, type ChildProcess } from 'node:child_process'
import { connect } from 'node:net'
import { fileURLToPath } from 'node:url'
import { freePort } from '../../test/support/free-port.js'
import { waitFor } from '../../test/support/wait-for.js'
import { pinned, SERVER_CORE } from './cores.js'

export const KEYGATE_CLI = fileURLToPath(new URL('../../cli/keygate.js', import.meta.url))
/** A bench server script compiled next to this file (bench/servers/NAME.ts). */
export const benchServer = (name: string) => fileURLToPath(new URL(`../servers/${name}.js`, import.meta.url))

export interface BenchProcess {
  url: string
  port: number
  child: ChildProcess
  output(): string
  stop(): Promise<void>
}

export interface StartOptions {
  /** node arguments: a script and its flags. */
  args: string[]
  /** Flags for node itself (before the script). */
  nodeFlags?: string[]
  env?: Record<string, string>
  /** Path that answers 200 once the server is ready. */
  readyPath?: string
  /** How readiness shows: that path answering 200 (default), or the port accepting a TCP connection. */
  ready?: 'http' | 'tcp'
  /** Pin to the server core (default true). */
  pin?: boolean
  /** Pin to this core instead (e.g. the load core, for what serves the load generator rather than the test). */
  core?: number
  port?: number
  /** A command the node process runs under (e.g. valgrind and its flags). */
  wrap?: string[]
  /** How long it may take to become ready (default 30 s; much longer under valgrind). */
  readyTimeoutMs?: number
}

/** Whether something accepts TCP connections on the port. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** Starts a node process on a free port (PORT in its environment), pinned to the server core, and waits for it. */
export async function startServer(options: StartOptions): Promise<BenchProcess> {
  const port = options.port ?? (await freePort())
  const command = [...(options.wrap ?? []), process.execPath, ...(options.nodeFlags ?? []), ...options.args]
  const [bin, ...args] = options.pin === false ? command : pinned(options.core ?? SERVER_CORE, command)
  const child = spawn(bin!, args, {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk) => (output = (output + String(chunk)).slice(-20_000)))
  child.stderr.on('data', (chunk) => (output = (output + String(chunk)).slice(-20_000)))
  const url = `http://127.0.0.1:${port}`
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`${options.args.join(' ')} exited ${child.exitCode}: ${output}`)
        if (options.ready === 'tcp') return await accepts(port)
        return (await fetch(`${url}${options.readyPath ?? '/readyz'}`)).status === 200
      },
      `${options.args[0]} to be ready`,
      options.readyTimeoutMs ?? 30_000,
      50,
    )
  } catch (err) {
    // Never leave a half-started server behind.
    child.kill('SIGKILL')
    throw err
  }
  return {
    url,
    port,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    },
  }
}

/**
 * `keygate <command>` as a bench server. With BENCH_CPU_PROF=DIR each one writes a V8 CPU profile there when it
 * stops (open it in Chrome DevTools or speedscope for the flame graph; `node dist/bench/profile-summary.js FILE`
 * prints the heaviest functions).
 */
export function startKeygate(
  command: string[],
  env: Record<string, string>,
  options: Partial<StartOptions> = {},
): Promise<BenchProcess> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []
  return startServer({
    ...options,
    nodeFlags: [...profile, ...(options.nodeFlags ?? [])],
    args: [KEYGATE_CLI, ...command],
    env,
  })
}
