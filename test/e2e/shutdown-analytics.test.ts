import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { ClickhouseServerEngine } from '../../control-plane/analytics/engine/clickhouse-server-engine.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { useClickhouseServer } from '../support/clickhouse-server.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { startKeygate } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * A process stopped by SIGTERM hands the analytics rows it recorded since its last hand-over (every 2 s) to the
 * store's buffer before it closes its Redis connections: a rolling restart loses none. Each case verifies a fresh key
 * a few times, stops the process at once (well inside the hand-over interval) and reads the counts back once ingested.
 * Every control plane here keeps analytics on one ClickHouse (a test server): whichever holds the ingest's lease, the
 * rows land in the same tables.
 */

const redis = useRedisServer()
const clickhouse = useClickhouseServer()
let admin: TestServer
let engine: ClickhouseServerEngine
let upstream: EchoUpstream

beforeAll(async () => {
  engine = new ClickhouseServerEngine(clickhouse().url)
  await engine.ensureDatabase()
  await ensureAnalyticsSchema(engine)
  admin = await startTestControlPlane({ redisUrl: redis.url, analytics: { engine, holder: 'shutdown-admin' } })
  upstream = await startEchoUpstream()
})
afterAll(async () => {
  await upstream?.stop()
  await admin?.close()
  await engine?.close()
})

async function freshKey(): Promise<{ key: string; keyId: string }> {
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const api = await admin.app.inject({ method: 'POST', url: '/v1/apis.createApi', headers, payload: { name: 'usage' } })
  const { apiId } = api.json<{ apiId: string }>()
  const key = await admin.app.inject({ method: 'POST', url: '/v1/keys.createKey', headers, payload: { apiId } })
  return key.json<{ key: string; keyId: string }>()
}

/** Successful verifications of the key, once they are all ingested (a few passes at most). */
async function successesOf(keyId: string, expected: number): Promise<number> {
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  let counted = 0
  await waitFor(
    async () => {
      await admin.ingest!.ingestNow()
      const answer = await admin.app.inject({
        method: 'GET',
        url: `/v1/keys.getVerifications?keyId=${keyId}`,
        headers,
      })
      expect(answer.statusCode).toBe(200)
      const { verifications } = answer.json<{ verifications: { success: number }[] }>()
      counted = verifications.reduce((sum, bucket) => sum + bucket.success, 0)
      return counted >= expected
    },
    `${expected} verifications of ${keyId} ingested`,
    20_000,
    200,
  ).catch(() => undefined)
  return counted
}

const verifyKey = (url: string, key: string) =>
  fetch(`${url}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  }).then((response) => response.json() as Promise<{ valid: boolean }>)

const TIMES = 7

describe('analytics rows survive a SIGTERM', () => {
  it('of a verifier', async () => {
    const { key, keyId } = await freshKey()
    const verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    for (let i = 0; i < TIMES; i++) expect(await verifyKey(verifier.url, key)).toMatchObject({ valid: true })
    expect(await verifier.stop()).toBe(0)
    expect(await successesOf(keyId, TIMES)).toBe(TIMES)
    expect(verifier.output()).not.toMatch(/could not hand analytics rows|analytics rows .*dropped|Connection is closed/)
  })

  it('of a verifier in reverse-proxy mode', async () => {
    const { key, keyId } = await freshKey()
    const proxyPort = await freePort()
    const args = ['verifier', '--upstream', upstream.url, '--proxy-port', String(proxyPort), '--any-api']
    const verifier = await startKeygate(args, { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    for (let i = 0; i < TIMES; i++) {
      expect((await fetch(`http://127.0.0.1:${proxyPort}/`, { headers: { 'x-api-key': key } })).status).toBe(200)
    }
    expect(await verifier.stop()).toBe(0)
    expect(await successesOf(keyId, TIMES)).toBe(TIMES)
    expect(verifier.output()).not.toMatch(/could not hand analytics rows|analytics rows .*dropped|Connection is closed/)
  })

  it('of a control plane (its own keys.verifyKey)', async () => {
    const { key, keyId } = await freshKey()
    const controlPlane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      CLICKHOUSE_URL: clickhouse().url,
      LOG_LEVEL: 'warn',
    })
    for (let i = 0; i < TIMES; i++) expect(await verifyKey(controlPlane.url, key)).toMatchObject({ valid: true })
    expect(await controlPlane.stop()).toBe(0)
    expect(await successesOf(keyId, TIMES)).toBe(TIMES)
    expect(controlPlane.output()).not.toMatch(
      /could not hand analytics rows|analytics rows .*dropped|Connection is closed/,
    )
  })
})
