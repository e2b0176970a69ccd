import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { freePort } from '../support/free-port.js'
import { CLI, startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, useRedisServer, type RedisServer } from '../support/redis-server.js'
import { newReportSigner, signedHeaders, startKeySetServer, type KeySetServer } from '../support/secret-scanning.js'
import { startStrandingProxy, type StrandingProxy } from '../support/stranding-proxy.js'
import { waitFor } from '../support/wait-for.js'

const redis = useRedisServer()
const ROOT_KEY = 'test-root-key-0123456789abcdef'

interface LogLine {
  level: number
  msg: string
  err?: { message?: string; stack?: string }
  res?: { statusCode?: number }
}

/** The JSON lines a process logged (anything else it printed is not a log line). */
const logLines = (output: string): LogLine[] =>
  output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine)

/** Warnings and worse (pino: 40 warn, 50 error, 60 fatal), as text to show when there are any. */
const warnings = (output: string) =>
  logLines(output)
    .filter((line) => line.level >= 40)
    .map((line) => `${line.level} ${line.msg}${line.err ? `: ${line.err.message}` : ''}`)

/**
 * A control plane on Redis that starts as it should logs nothing at WARN or above: its background work on the store
 * (publishing root keys to verifiers, webhooks, rate-limit counts) waits until the store has answered, rather than
 * failing on a connection still being made. A warning that does come names its real cause.
 */
describe('a control plane starting on Redis', () => {
  const running: KeygateProcess[] = []
  let keySet: KeySetServer
  let proxy: StrandingProxy
  beforeAll(async () => {
    keySet = await startKeySetServer([newReportSigner('github-key-1')])
    proxy = await startStrandingProxy(redis.url)
  })
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()))
    await proxy.stop()
    await keySet.close()
  })

  it('logs no warning on a healthy start', async () => {
    const plane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'info',
      SECRET_SCANNING_KEYS_URL: keySet.url,
    })
    running.push(plane)
    // Its background work has run on the store: the webhook deriver holds its lease.
    await waitFor(async () => (await redis.admin.exists(redisKeys.webhookLease('deriver'))) === 1, 'the deriver lease')
    expect(await plane.stop()).toBe(0)
    expect(warnings(plane.output())).toEqual([])
  })

  it('logs no warning when Redis answers only once the control plane listens, and names a failed fetch', async () => {
    // Whatever the control plane sends Redis is held until it has started listening: its ready hooks run first.
    proxy.blackhole()
    const port = await freePort()
    const plane = spawnControlPlane(port, { REDIS_URL: proxy.url, SECRET_SCANNING_KEYS_URL: keySet.url })
    const output = plane.output
    try {
      await waitFor(() => output().includes('control plane started'), 'the control plane to listen', 15_000)
      proxy.resume()
      const url = `http://127.0.0.1:${port}`
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'the control plane to be ready', 15_000)
      await redis.admin.del(redisKeys.webhookLease('deriver'))
      await waitFor(async () => (await redis.admin.exists(redisKeys.webhookLease('deriver'))) === 1, 'the lease')
      expect(warnings(output())).toEqual([])

      // GitHub's key endpoint failing: the report is answered 503, and the one warning says why.
      keySet.status = 500
      const body = JSON.stringify([{ token: 'sk_x', type: 'keygate_api_key' }])
      const answer = await fetch(`${url}/v1/secret-scanning/github`, {
        method: 'POST',
        headers: signedHeaders(newReportSigner('github-key-1'), body),
        body,
      })
      expect(answer.status).toBe(503)
      // Logged once answered: whatever the answer's handling logged is in the output before it.
      await waitFor(
        () => logLines(output()).some((line) => line.msg === 'request completed' && line.res?.statusCode === 503),
        'the 503 to be logged',
      )
      const logged = logLines(output()).filter((line) => line.level >= 40)
      expect(logged, warnings(output()).join('\n')).toHaveLength(1)
      expect(logged[0]!.msg).not.toContain('store')
      expect(logged[0]!.msg).toContain('the keys that sign leak reports cannot be fetched')
      expect(logged[0]!.err?.stack).toContain('the key set answered 500')
    } finally {
      await plane.stop()
    }
  })

  it('starts its work on the store once Redis comes up, seconds after it', async () => {
    const [redisPort, port] = [await freePort(), await freePort()]
    const plane = spawnControlPlane(port, { REDIS_URL: `redis://127.0.0.1:${redisPort}` })
    let late: RedisServer | undefined
    try {
      await waitFor(() => plane.output().includes('control plane started'), 'the control plane to listen', 15_000)
      const url = `http://127.0.0.1:${port}`
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 503, 'not ready while Redis is not there')
      late = await startRedisServer({ port: redisPort })
      await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'ready', 20_000)
      const redis = late
      await waitFor(async () => (await redis.admin.exists(redisKeys.webhookLease('deriver'))) === 1, 'the lease')
    } finally {
      await plane.stop()
      await late?.stop()
    }
  })

  it('stops within seconds, cleanly, when it is stopped before Redis ever answered', async () => {
    const plane = spawnControlPlane(await freePort(), { REDIS_URL: `redis://127.0.0.1:${await freePort()}` })
    await waitFor(() => plane.output().includes('control plane started'), 'the control plane to listen', 15_000)
    const stopping = Date.now()
    expect(await plane.stop()).toBe(0)
    expect(Date.now() - stopping).toBeLessThan(10_000)
  })
})

/** `keygate control-plane` on `port` with `env` (and the bootstrap root key), its output kept, stopped by SIGTERM. */
function spawnControlPlane(port: number, env: Record<string, string>) {
  // Its analytics engine on data of its own, removed when it exits.
  const analyticsDir = mkdtempSync(join(tmpdir(), 'keygate-e2e-analytics-'))
  const child = spawn(process.execPath, [CLI, 'control-plane'], {
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      KEYGATE_ROOT_KEY: ROOT_KEY,
      ANALYTICS_DIR: analyticsDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.once('exit', () => rmSync(analyticsDir, { recursive: true, force: true }))
  let output = ''
  child.stdout.on('data', (chunk) => (output += String(chunk)))
  child.stderr.on('data', (chunk) => (output += String(chunk)))
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  return {
    output: () => output,
    /** SIGTERM, and the exit code (again: the same code). */
    stop: () => {
      child.kill('SIGTERM')
      return exited
    },
  }
}
