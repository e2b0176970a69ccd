import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { jsonPoster, runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

const ROOT_KEY = 'proxy-test-root-key-0123456789'
const post = jsonPoster(ROOT_KEY)

describe('keygate verifier --upstream (reverse-proxy mode, real processes)', () => {
  let redis: RedisServer
  let controlPlane: KeygateProcess
  let verifier: KeygateProcess
  let upstream: EchoUpstream
  let proxyUrl: string
  let apiId: string

  beforeAll(async () => {
    redis = await startRedisServer()
    upstream = await startEchoUpstream()
    controlPlane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
    })
    apiId = (await post(controlPlane.url, 'apis.createApi', { name: 'proxied' })).body.apiId
    const proxyPort = await freePort()
    proxyUrl = `http://127.0.0.1:${proxyPort}`
    const args = ['verifier', '--upstream', upstream.url, '--proxy-port', String(proxyPort), '--api-id', apiId]
    verifier = await startKeygate(args, { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
  })
  afterAll(async () => {
    await verifier?.stop()
    await controlPlane?.stop()
    await upstream?.stop()
    await redis?.stop()
  })

  it('forwards requests with a valid key of its api to the upstream on PROXY_PORT, and refuses the rest', async () => {
    const { key, keyId } = (await post(controlPlane.url, 'keys.createKey', { apiId })).body
    const otherApi = (await post(controlPlane.url, 'apis.createApi', { name: 'other' })).body.apiId
    const otherKey = (await post(controlPlane.url, 'keys.createKey', { apiId: otherApi })).body.key
    const through = await fetch(`${proxyUrl}/hello?x=1`, { headers: { 'x-api-key': key } })
    expect(through.status).toBe(200)
    expect(await through.json()).toMatchObject({ method: 'GET', url: '/hello?x=1' })
    expect(upstream.seen.at(-1)!.headers['x-keygate-key-id']).toBe(keyId)
    const missing = await fetch(`${proxyUrl}/hello`)
    expect(missing.status).toBe(401)
    // Its docs link is absolute, at the address the client used (DOCS_BASE_URL, unset here, would name a public one).
    expect(((await missing.json()) as { error: { docs: string } }).error.docs).toBe(
      `${proxyUrl}/docs/errors/MISSING_KEY`,
    )
    const forbidden = await fetch(`${proxyUrl}/hello`, { headers: { 'x-api-key': otherKey } })
    expect(forbidden.status).toBe(403)
    expect(forbidden.headers.get('x-keygate-code')).toBe('FORBIDDEN')
    expect(((await forbidden.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN')
    // The verifier's own endpoints stay on PORT, not on the proxy.
    expect((await fetch(`${verifier.url}/readyz`)).status).toBe(200)
    expect((await fetch(`${verifier.url}/hello`)).status).toBe(404)
  })

  it('refuses to start without the api its keys must belong to, and starts with --any-api, saying so', async () => {
    const proxy = ['verifier', '--upstream', upstream.url, '--proxy-port', String(await freePort())]
    const refused = await runKeygate([...proxy, '--port', '0'], { REDIS_URL: redis.url })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(/AUTHORIZE_API_ID \(--api-id\) is required in reverse-proxy mode[^\n]*--any-api/)
    const anyApi = await startKeygate([...proxy, '--any-api'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    try {
      expect(anyApi.output()).toMatch(
        /"level":40[^\n]*AUTHORIZE_ANY_API: the proxy forwards requests with a key of any api/,
      )
    } finally {
      await anyApi.stop()
    }
  })
})
