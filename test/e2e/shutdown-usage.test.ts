import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { startKeygate } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'

/**
 * A process stopped by SIGTERM writes the verification counts it gathered since its last flush (every 5 s)
 * before it closes its Redis connections: a rolling restart loses none. Each case verifies a fresh key a few
 * times, stops the process at once (well inside the flush interval) and reads the counts back.
 */

const redis = useRedisServer()
let admin: TestServer
let upstream: EchoUpstream

beforeAll(async () => {
  admin = await startTestControlPlane({ redisUrl: redis.url })
  upstream = await startEchoUpstream()
})
afterAll(async () => {
  await upstream?.stop()
  await admin?.close()
})

async function freshKey(): Promise<{ key: string; keyId: string }> {
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const api = await admin.app.inject({ method: 'POST', url: '/v1/apis.createApi', headers, payload: { name: 'usage' } })
  const { apiId } = api.json<{ apiId: string }>()
  const key = await admin.app.inject({ method: 'POST', url: '/v1/keys.createKey', headers, payload: { apiId } })
  return key.json<{ key: string; keyId: string }>()
}

/** Successful verifications of the key recorded in Redis. */
async function successesOf(keyId: string): Promise<number> {
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const answer = await admin.app.inject({ method: 'GET', url: `/v1/keys.getVerifications?keyId=${keyId}`, headers })
  expect(answer.statusCode).toBe(200)
  const { verifications } = answer.json<{ verifications: { success: number }[] }>()
  return verifications.reduce((sum, bucket) => sum + bucket.success, 0)
}

const verifyKey = (url: string, key: string) =>
  fetch(`${url}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key }),
  }).then((response) => response.json() as Promise<{ valid: boolean }>)

const TIMES = 7

describe('usage counts survive a SIGTERM', () => {
  it('of a verifier', async () => {
    const { key, keyId } = await freshKey()
    const verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    for (let i = 0; i < TIMES; i++) expect(await verifyKey(verifier.url, key)).toMatchObject({ valid: true })
    expect(await verifier.stop()).toBe(0)
    expect(await successesOf(keyId)).toBe(TIMES)
    expect(verifier.output()).not.toMatch(/could not record verification counts|Connection is closed/)
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
    expect(await successesOf(keyId)).toBe(TIMES)
    expect(verifier.output()).not.toMatch(/could not record verification counts|Connection is closed/)
  })

  it('of a control plane (its own keys.verifyKey)', async () => {
    const { key, keyId } = await freshKey()
    const controlPlane = await startKeygate(['control-plane'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    for (let i = 0; i < TIMES; i++) expect(await verifyKey(controlPlane.url, key)).toMatchObject({ valid: true })
    expect(await controlPlane.stop()).toBe(0)
    expect(await successesOf(keyId)).toBe(TIMES)
    expect(controlPlane.output()).not.toMatch(/could not record verification counts|Connection is closed/)
  })
})
