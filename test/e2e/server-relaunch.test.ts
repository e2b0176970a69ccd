import { fork } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { getHeapStatistics } from 'node:v8'
import { describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port.js'
import { CLI, startKeygate, type KeygateProcess } from '../support/processes.js'
import { waitFor } from '../support/wait-for.js'

const PROBE = fileURLToPath(new URL('../support/young-generation-probe.mjs', import.meta.url))
const CAP = '--max-semi-space-size=8'
/** The cap's young generation: two semi-spaces of 8 MB. */
const CAPPED_BYTES = 16 * 2 ** 20

/** The node flags a running process was started with, as the kernel has them (its argv after the node binary). */
function commandLineOf(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(1)
}

const frameOnByDefault = Number(process.versions.node.split('.')[0]) >= 24
/**
 * Node 22.15 / 23.11 on: a server can relaunch itself (process.execve), and it caps the young generation where V8
 * gives a process a heap of 1 GiB or more (as it gives this one, the same node on the same machine).
 */
const caps =
  typeof (process as unknown as { execve?: unknown }).execve === 'function' &&
  getHeapStatistics().heap_size_limit >= 2 ** 30

/** What the probe preloaded into `server`, asked once the server is ready, found its young generation grown to. */
async function youngGenerationOf(server: KeygateProcess): Promise<{ bytes: number; flags: string[] }> {
  server.child.kill('SIGUSR2')
  let found: { bytes: number; flags: string[] } | undefined
  await waitFor(
    () => {
      const printed = /young generation: (\d+) bytes, node flags (.*)\n/.exec(server.output())
      found = printed ? { bytes: Number(printed[1]), flags: JSON.parse(printed[2]!) as string[] } : undefined
      return found !== undefined
    },
    'the young-generation probe to print',
    15_000,
    50,
  )
  return found!
}

/**
 * The exit code of a server the probe was run in. SIGUSR2, the probe's signal, is a shutdown signal to the server
 * too (close-with-grace's): it is on its way out once the probe printed, and a SIGTERM during its shutdown would be a
 * second signal, which exits at once with 1. So it is given time to exit by itself, and stopped only if it does not.
 */
async function shutDownByProbe(server: KeygateProcess): Promise<number | null> {
  const { child } = server
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const late = await Promise.race([exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 15_000))])
  return late === 'late' ? server.stop() : late
}

/**
 * cli/server-relaunch.ts: a server relaunches itself in the process it was started as (the pid a supervisor holds)
 * with the node flags it lacks — --no-async-context-frame on Node 24, V8's young generation capped — and serves; an
 * operator's own flags of either kind are kept.
 */
describe("the servers' relaunch with their node flags", () => {
  it(`keygate dev runs with ${[frameOnByDefault && 'the frame flag', caps && 'the cap'].filter(Boolean).join(' and ') || 'no flag'} added, in the process it was started as, and serves`, async () => {
    const server = await startKeygate(['dev'])
    try {
      const flags = commandLineOf(server.child.pid!)
      expect(flags.includes('--no-async-context-frame')).toBe(frameOnByDefault)
      expect(flags.includes(CAP)).toBe(caps)
      const answer = await fetch(`${server.url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"key":"sk_unknown"}',
      })
      expect(answer.status).toBe(200)
      expect(((await answer.json()) as { code: string }).code).toBe('NOT_FOUND')
    } finally {
      expect(await server.stop()).toBe(0)
    }
  })

  it.runIf(caps)("holds the server's young generation at the cap where V8 would grow it past", async () => {
    const server = await startKeygate(['dev'], { LOG_LEVEL: 'warn' }, ['--import', PROBE])
    try {
      const young = await youngGenerationOf(server)
      expect(young.flags).toContain(CAP)
      expect(young.bytes).toBeLessThanOrEqual(CAPPED_BYTES)
    } finally {
      expect(await shutDownByProbe(server)).toBe(0)
    }
    // The same probe with the operator's own size (kept): V8 grows it past the cap.
    const sized = await startKeygate(['dev'], { LOG_LEVEL: 'warn', NODE_OPTIONS: '--max-semi-space-size=64' }, [
      '--import',
      PROBE,
    ])
    try {
      expect(commandLineOf(sized.child.pid!)).not.toContain(CAP)
      const young = await youngGenerationOf(sized)
      expect(young.flags).not.toContain(CAP)
      expect(young.bytes).toBeGreaterThan(CAPPED_BYTES)
    } finally {
      expect(await shutDownByProbe(sized)).toBe(0)
    }
  })

  it.runIf(frameOnByDefault)(
    'keeps the frame when the operator asks for it in NODE_OPTIONS, and still caps',
    async () => {
      const server = await startKeygate(['dev'], { NODE_OPTIONS: '--async-context-frame' })
      try {
        const flags = commandLineOf(server.child.pid!)
        expect(flags).not.toContain('--no-async-context-frame')
        expect(flags).toContain(CAP)
        expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
      } finally {
        expect(await server.stop()).toBe(0)
      }
    },
  )

  it.runIf(frameOnByDefault || caps)(
    'leaves a server forked with an IPC channel (PM2, node --watch) as it was started: execve would drop the channel',
    async () => {
      const port = await freePort()
      const child = fork(CLI, ['dev'], {
        execArgv: [],
        env: { PATH: process.env.PATH ?? '', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      })
      const exited = new Promise((resolve) => child.once('exit', resolve))
      try {
        await waitFor(
          async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
          'the forked keygate dev to be ready',
          15_000,
          50,
        )
        const flags = commandLineOf(child.pid!)
        expect(flags).not.toContain('--no-async-context-frame')
        expect(flags).not.toContain(CAP)
        expect(child.connected).toBe(true)
      } finally {
        child.kill('SIGTERM')
        await exited
      }
    },
  )
})
