import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { freePort } from '../support/free-port.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

const ROOT_KEY = 'proxy-test-root-key-0123456789'

describe('keygate verifier --upstream (reverse-proxy mode, real processes)', () => {
  let redis: RedisServer
  let controlPlane: KeygateProcess
  let verifier: KeygateProcess
  let upstream: EchoUpstream
  let proxyUrl: string

  beforeAll(async () => {
    redis = await startRedisServer()
    upstream = await startEchoUpstream()
    controlPlane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
    })
    const proxyPort = await freePort()
    proxyUrl = `http://127.0.0.1:${proxyPort}`
    verifier = await startKeygate(['verifier', '--upstream', upstream.url, '--proxy-port', String(proxyPort)], {
      REDIS_URL: redis.url,
      LOG_LEVEL: 'warn',
    })
  })
  afterAll(async () => {
    await verifier?.stop()
    await controlPlane?.stop()
    await upstream?.stop()
    await redis?.stop()
  })

  it('forwards requests with a valid key to the upstream on PROXY_PORT, and refuses the rest', async () => {
    const admin = (path: string, body: unknown) =>
      fetch(`${controlPlane.url}/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, string>>)
    const { apiId } = await admin('apis.createApi', { name: 'proxied' })
    const { key, keyId } = await admin('keys.createKey', { apiId })
    const through = await fetch(`${proxyUrl}/hello?x=1`, { headers: { 'x-api-key': key! } })
    expect(through.status).toBe(200)
    expect(await through.json()).toMatchObject({ method: 'GET', url: '/hello?x=1' })
    expect(upstream.seen.at(-1)!.headers['x-keygate-key-id']).toBe(keyId)
    expect((await fetch(`${proxyUrl}/hello`)).status).toBe(401)
    // The verifier's own endpoints stay on PORT, not on the proxy.
    expect((await fetch(`${verifier.url}/readyz`)).status).toBe(200)
    expect((await fetch(`${verifier.url}/hello`)).status).toBe(404)
  })
})
