import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './free-port.js'
import { waitFor } from './wait-for.js'

/** The built CLI: end-to-end tests run what users run (`npm test` builds first). */
export const CLI = fileURLToPath(new URL('../../dist/cli/keygate.js', import.meta.url))

export interface KeygateProcess {
  url: string
  child: ChildProcess
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Runs `keygate <args>` (node started with `nodeFlags`) on a free port, or on `env.PORT` when given, and waits until
 * /readyz answers 200.
 */
export async function startKeygate(
  args: string[],
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
): Promise<KeygateProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run npm run build (npm test does it)`)
  const port = env.PORT === undefined ? await freePort() : Number(env.PORT)
  // A control plane's embedded analytics engine on data of its own, removed when it exits, unless the test names it:
  // its default, ./keygate-analytics, would be the repository's and shared by every control plane a test starts.
  const analyticsDir =
    args[0] === 'control-plane' && env.ANALYTICS_DIR === undefined
      ? await mkdtemp(join(tmpdir(), 'keygate-e2e-analytics-'))
      : undefined
  const child = spawn(process.execPath, [...nodeFlags, CLI, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'trace',
      ...(analyticsDir === undefined ? {} : { ANALYTICS_DIR: analyticsDir }),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  if (analyticsDir !== undefined) child.once('exit', () => void rm(analyticsDir, { recursive: true, force: true }))
  let output = ''
  child.stdout.on('data', (chunk) => (output += String(chunk)))
  child.stderr.on('data', (chunk) => (output += String(chunk)))
  const url = `http://127.0.0.1:${port}`
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`keygate ${args.join(' ')} exited ${child.exitCode}: ${output}`)
      return (await fetch(`${url}/readyz`)).status === 200
    },
    `keygate ${args[0]} to be ready`,
    15_000,
    50,
  )
  return {
    url,
    child,
    output: () => output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
      child.kill(signal)
      return exited
    },
  }
}

/** Runs the CLI to completion. */
export function runKeygate(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => (stdout += String(chunk)))
    child.stderr.on('data', (chunk) => (stderr += String(chunk)))
    child.on('exit', (code) => resolve({ code, stdout, stderr }))
  })
}

/**
 * A POST to `base/v1/path` with a JSON body, with the root key when given. Never throws: a request that could
 * not be made (the server is down, restarting, failing over) is status 0, which the caller judges.
 */
export function jsonPoster(rootKey: string) {
  return async (
    base: string,
    path: string,
    body: unknown,
    auth = true,
  ): Promise<{ status: number; body: Record<string, any> }> => {
    const response = await fetch(`${base}/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${rootKey}` } : {}) },
      body: JSON.stringify(body),
    }).catch(() => undefined)
    return response
      ? { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, any> }
      : { status: 0, body: {} }
  }
}
