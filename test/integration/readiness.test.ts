import { afterAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { startControlPlane } from '../../cli/control-plane-command.js'
import { controlPlaneConfig, verifierConfig } from '../../shared/config/config.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { startVerifier } from '../../cli/verifier-command.js'
import { capturedLogger, openBackend, startTestVerifier, TEST_ROOT_KEY } from '../support/apps.js'
import { freePort } from '../support/free-port.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const servers: KeygateServer[] = []
let redis: RedisServer | undefined
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await redis?.stop()
})

const status = async (server: KeygateServer, url: string) => (await server.inject({ method: 'GET', url })).statusCode

describe('readiness and an unreachable store', () => {
  it('starts without Redis, is ready once Redis answers, answers 503 (never a hang) when it goes away', async () => {
    const port = await freePort()
    const env = {
      REDIS_URL: `redis://127.0.0.1:${port}`,
      PORT: '0',
      HOST: '127.0.0.1',
      KEYGATE_ROOT_KEY: TEST_ROOT_KEY,
    }
    const log = pino({ level: 'silent' })
    const verifier = await startVerifier(verifierConfig([], env), log)
    const controlPlane = await startControlPlane(controlPlaneConfig([], env), log)
    servers.push(verifier, controlPlane)

    expect(await status(verifier, '/livez')).toBe(200)
    expect(await status(verifier, '/readyz')).toBe(503)
    expect(await status(controlPlane, '/readyz')).toBe(503)
    const notReady = await verifier.inject({ method: 'GET', url: '/readyz' })
    expect(notReady.json().error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('not ready') })

    redis = await startRedisServer({ port })
    await waitFor(async () => (await status(verifier, '/readyz')) === 200, 'the verifier to become ready', 10_000, 50)
    await waitFor(
      async () => (await status(controlPlane, '/readyz')) === 200,
      'the control plane to become ready',
      10_000,
      50,
    )
    const auth = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    const api = await controlPlane.inject({
      method: 'POST',
      url: '/v1/apis.createApi',
      headers: auth,
      payload: { name: 'readiness' },
    })
    expect(api.statusCode).toBe(200)

    await redis.stop()
    redis = undefined
    const started = Date.now()
    const write = await controlPlane.inject({
      method: 'POST',
      url: '/v1/apis.createApi',
      headers: auth,
      payload: { name: 'readiness' },
    })
    expect(write.statusCode).toBe(503)
    expect(write.json().error.code).toBe('UNAVAILABLE')
    const miss = await verifier.inject({
      method: 'POST',
      url: '/v1/keys.verifyKey',
      headers: { 'content-type': 'application/json' },
      payload: { key: 'sk_unknown_key_value' },
    })
    expect(miss.statusCode).toBe(503)
    expect(miss.json().error.code).toBe('UNAVAILABLE')
    expect(Date.now() - started).toBeLessThan(5_000)
    await waitFor(
      async () => (await status(verifier, '/readyz')) === 503,
      'the verifier to report not ready',
      5_000,
      50,
    )
    expect(await status(verifier, '/livez')).toBe(200)
  })
})

describe('readiness of a verifier bound to an api (--api-id)', () => {
  it('is not ready while its api does not exist (logged, naming it), and turns ready once the api is created', async () => {
    const backend = await openBackend()
    const { log, lines } = capturedLogger()
    const apiId = 'api_created_later'
    const verifier = await startTestVerifier({ backend, log, gateway: { apiId } })
    try {
      const notReady = await verifier.app.inject({ method: 'GET', url: '/readyz' })
      expect(notReady.statusCode).toBe(503)
      expect(notReady.json().error.message).toContain(`api ${apiId} (AUTHORIZE_API_ID) does not exist`)
      expect((await verifier.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^keygate_ready\S* 0$/m)
      const warnings = lines.map((line) => JSON.parse(line)).filter((line) => line.apiId === apiId)
      expect(warnings).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringMatching(/does not exist: \/readyz answers 503/) }),
      ])

      await backend.store.keys.createApi({ id: apiId, name: 'late', createdAt: Date.now() })
      expect(await status(verifier.app, '/readyz')).toBe(200)
      expect(lines.join('')).toMatch(/the bound api \(AUTHORIZE_API_ID\) exists now/)
    } finally {
      await verifier.close()
      await backend.close()
    }
  })

  it('is ready with an api that exists, and without a bound api', async () => {
    const backend = await openBackend()
    await backend.store.keys.createApi({ id: 'api_there', name: 'there', createdAt: Date.now() })
    const bound = await startTestVerifier({ backend, gateway: { apiId: 'api_there' } })
    const unbound = await startTestVerifier({ backend })
    try {
      expect(await status(bound.app, '/readyz')).toBe(200)
      expect(await status(unbound.app, '/readyz')).toBe(200)
    } finally {
      await bound.close()
      await unbound.close()
      await backend.close()
    }
  })
})
