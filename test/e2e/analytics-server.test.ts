import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startClickhouseServer, useClickhouseServer, type ClickhouseServer } from '../support/clickhouse-server.js'
import { freePort } from '../support/free-port.js'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const TRACER = fileURLToPath(new URL('../support/module-trace.mjs', import.meta.url))
/** Past a verifier's hand-over (2 s) and a control plane's longest idle wait between ingest passes (16 s). */
const INGESTED_WITHIN_MS = 40_000

/**
 * Analytics on a ClickHouse server, through the processes users run: `keygate control-plane` with CLICKHOUSE_URL (a
 * ClickHouse test server: test/support/clickhouse-http-server.mjs) and `keygate verifier`, on a Redis of their own. A
 * verification on the verifier is ingested and answered by v2's analytics.getVerifications; every control plane on
 * the server answers it, and any may ingest.
 */
describe('end to end: analytics on a ClickHouse server', () => {
  const redis = useRedisServer()
  const clickhouse = useClickhouseServer({ password: 'e2e-clickhouse-pw-4b7a' })
  const traces = mkdtempSync(join(tmpdir(), 'keygate-analytics-e2e-'))
  const trace = join(traces, 'first.trace')
  let rootKey: string
  let first: KeygateProcess
  let second: KeygateProcess | undefined
  let verifier: KeygateProcess
  let apiId: string
  let key: string

  const controlPlane = (url: string, env: Record<string, string> = {}) =>
    startKeygate(['control-plane'], { REDIS_URL: redis.url, CLICKHOUSE_URL: url, ...env })

  beforeAll(async () => {
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url])
    expect(created.code, created.stderr).toBe(0)
    rootKey = created.stdout.trim()
    first = await controlPlane(clickhouse().url, {
      NODE_OPTIONS: `--import=${pathToFileURL(TRACER).href}`,
      KEYGATE_MODULE_TRACE: trace,
    })
    verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url })
    const api = await call(first, '/v1/apis.createApi', { name: 'analytics-e2e' })
    apiId = api.body.apiId
    key = (await call(first, '/v1/keys.createKey', { apiId })).body.key
  }, 60_000)
  afterAll(async () => {
    await verifier?.stop()
    await second?.stop()
    await first?.stop()
    rmSync(traces, { recursive: true, force: true })
  })

  async function call(plane: KeygateProcess, path: string, body: object) {
    const response = await fetch(`${plane.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Record<string, any> }
  }
  /** The api's verifications, as a control plane's analytics.getVerifications counts them. */
  const counted = (plane: KeygateProcess) =>
    call(plane, '/v2/analytics.getVerifications', {
      query: `SELECT count(*) AS n FROM key_verifications_v1 WHERE key_space_id = '${apiId}'`,
    })
  const verify = async (times: number) => {
    for (let i = 0; i < times; i++) {
      const answer = await fetch(`${verifier.url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      })
      expect(((await answer.json()) as { valid: boolean }).valid).toBe(true)
    }
  }
  const countReaches = (plane: KeygateProcess, n: number) =>
    waitFor(
      async () => {
        const answer = await counted(plane)
        return answer.status === 200 && answer.body.data[0]?.n === n ? answer : undefined
      },
      `${plane.url} to count ${n} verifications`,
      INGESTED_WITHIN_MS,
      250,
    )

  it('starts on the server and says so in its start-up log, without the password', async () => {
    await waitFor(() => first.output().includes('control plane started'), 'the start-up log')
    const started = first
      .output()
      .split('\n')
      .find((line) => line.includes('control plane started'))!
    expect(JSON.parse(started).analytics).toEqual({
      engine: 'server',
      clickhouse: `http://127.0.0.1:${clickhouse().port}/keygate`,
    })
    expect(first.output()).not.toContain(clickhouse().password)
  })

  it('records a verification on a verifier, ingests it and answers it from analytics.getVerifications', async () => {
    await verify(3)
    await countReaches(first, 3)
  })

  it('answers the same count from a second control plane on the same server', async () => {
    second = await controlPlane(clickhouse().url)
    // Once it has found its tables on the server (503 until then, a moment after it is ready): it ingested nothing.
    await waitFor(async () => (await counted(second!)).status !== 503, 'the second control plane to find its tables')
    const answer = await counted(second)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body.data).toEqual([{ n: 3 }])
  })

  it('ingests on whichever control plane holds the lease: with the first stopped, the second takes over', async () => {
    expect(await first.stop()).toBe(0)
    await verify(2)
    await countReaches(second!, 5)
    // Neither the first control plane's log says the password, nor did it load the embedded engine it did not run.
    expect(first.output()).not.toContain(clickhouse().password)
    const modules = readFileSync(trace, 'utf8').split('\n')
    expect(modules.some((module) => module.includes('node_modules/@clickhouse/client/'))).toBe(true)
    expect(modules.filter((module) => /node_modules\/(chdb|@chdb)\//.test(module))).toEqual([])
  }, 60_000)

  it('starts while its server is down, answers 503 for analytics, and serves once the server is up', async () => {
    const port = await freePort()
    const password = 'late-e2e-pw-9d2e'
    const url = `http://keygate:${password}@127.0.0.1:${port}/keygate`
    const late = await controlPlane(url)
    let server: ClickhouseServer | undefined
    try {
      const refused = await counted(late)
      expect(refused.status).toBe(503)
      expect(refused.body.error.type).toMatch(/analytics_connection_failed$/)
      // Keys are served meanwhile.
      expect((await call(late, '/v1/keys.verifyKey', { key })).body.valid).toBe(true)
      server = await startClickhouseServer({ port, password })
      // The server is new and empty: the control plane made its database and tables.
      await countReaches(late, 0)
      expect(late.output()).toContain('the analytics tables could not be made yet')
      expect(late.output()).not.toContain(password)
    } finally {
      await late.stop()
      await server?.stop()
    }
  }, 60_000)
})
