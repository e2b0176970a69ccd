import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startGatewayStack, type GatewayStack } from '../support/gateway-stack.js'
import { startNginx, type Nginx } from '../support/nginx.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { docBlock } from '../support/doc-blocks.js'
import { clearOfWindowEdge } from '../support/window-edge.js'
import { pollUntil } from '../support/wait-for.js'

const EXAMPLE = new URL('../../deploy/examples/sidecar/forward-auth/nginx.conf', import.meta.url)

/**
 * The nginx configuration of docs/gateways.md (auth_request → the verifier's /v1/authorize), as it is there with the
 * addresses and api id filled in, run by a real nginx in front of a real upstream, with the verifier and control
 * plane as processes on a real Redis; and the sidecar example's nginx.conf, which leaves the api to the verifier's
 * AUTHORIZE_API_ID.
 */
describe('forward-auth through a real nginx (auth_request), configured as docs/gateways.md says', () => {
  let stack: GatewayStack
  let nginx: Nginx
  /** The sidecar example: the verifier is bound to the api (--api-id), nginx clears X-Keygate-Api-Id. */
  let bound: KeygateProcess
  let example: Nginx

  beforeAll(async () => {
    stack = await startGatewayStack()
    const { verifier, upstream, apiId } = stack
    const locations = docBlock('docs/gateways.md', 'Forward-auth', 'nginx', [
      ['http://127.0.0.1:7071', verifier.url],
      ['http://127.0.0.1:3000', upstream.url],
      ['"api_…"', `"${apiId}"`],
    ])
    nginx = await startNginx((port) => `server {\n  listen 127.0.0.1:${port};\n${locations}\n}`)
    bound = await startKeygate(['verifier', '--api-id', apiId], { REDIS_URL: stack.redis.url, LOG_LEVEL: 'warn' })
    let conf = readFileSync(EXAMPLE, 'utf8')
    for (const [from, to] of [
      ['http://127.0.0.1:7071', bound.url],
      ['http://127.0.0.1:3000', upstream.url],
    ] as const) {
      expect(conf, from).toContain(from)
      conf = conf.split(from).join(to)
    }
    example = await startNginx((port) => conf.replace('listen 8080;', `listen 127.0.0.1:${port};`))
  })
  afterAll(async () => {
    await example?.stop()
    await nginx?.stop()
    await bound?.stop()
    await stack?.stop()
  })

  it('lets a valid key through with its id and owner, and without the key itself', async () => {
    const { upstream, key } = stack
    for (const headers of [{ 'x-api-key': key.key }, { authorization: `Bearer ${key.key}` }] as Record<
      string,
      string
    >[]) {
      const before = upstream.seen.length
      const response = await fetch(`${nginx.url}/orders?page=2`, { headers })
      expect(response.status, nginx.errorLog()).toBe(200)
      expect(response.headers.get('x-upstream')).toBe('echo')
      const seen = upstream.seen.slice(before)
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({ method: 'GET', url: '/orders?page=2' })
      expect(seen[0]!.headers['x-keygate-key-id']).toBe(key.keyId)
      expect(seen[0]!.headers['x-keygate-owner-id']).toBe('acme')
      expect(JSON.stringify(seen[0]!.headers)).not.toContain(key.key)
    }
  })

  it('refuses no key and an unknown key with 401, a key of another api with 403, and the upstream sees neither', async () => {
    const { upstream, key, otherApiKey, otherApiId } = stack
    const before = upstream.seen.length
    expect((await fetch(`${nginx.url}/orders`)).status).toBe(401)
    expect((await fetch(`${nginx.url}/orders`, { headers: { 'x-api-key': 'sk_not_a_real_key_0000' } })).status).toBe(
      401,
    )
    expect((await fetch(`${nginx.url}/orders`, { headers: { 'x-api-key': otherApiKey.key } })).status).toBe(403)
    // A client cannot pick its own policy: nginx overwrites the X-Keygate-* headers.
    expect(
      (
        await fetch(`${nginx.url}/orders`, {
          headers: { 'x-api-key': otherApiKey.key, 'x-keygate-api-id': otherApiId },
        })
      ).status,
    ).toBe(403)
    expect(upstream.seen.length).toBe(before)
    // … nor add a requirement (nginx clears the header): the valid key still passes.
    expect(
      (
        await fetch(`${nginx.url}/orders`, {
          headers: { 'x-api-key': key.key, 'x-keygate-permissions': 'admin.everything' },
        })
      ).status,
    ).toBe(200)
    upstream.seen.pop()
    expect(upstream.seen.length).toBe(before)
  })

  it('stops letting a key through as soon as it is disabled', async () => {
    const { key, admin } = stack
    expect((await fetch(`${nginx.url}/x`, { headers: { 'x-api-key': key.key } })).status).toBe(200)
    await admin('keys.updateKey', { keyId: key.keyId, enabled: false })
    const disabledAt = performance.now()
    await pollUntil(
      async () => {
        if ((await fetch(`${nginx.url}/x`, { headers: { 'x-api-key': key.key } })).status === 401) return true
        expect(performance.now() - disabledAt).toBeLessThan(5_000)
        return false
      },
      'the disabled key refused',
      10_000,
      5,
    )
    await admin('keys.updateKey', { keyId: key.keyId, enabled: true })
  })

  it('passes the verifier’s 429 on with Retry-After (auth_request alone would answer 500), and the API’s own 500 unchanged', async () => {
    for (const gateway of [nginx, example]) {
      const limited = await stack.newKey({ ratelimit: { limit: 1, duration: 60_000 } })
      const headers = { 'x-api-key': limited.key }
      await clearOfWindowEdge(60_000)
      expect((await fetch(`${gateway.url}/x`, { headers })).status, gateway.errorLog()).toBe(200)
      const refused = await fetch(`${gateway.url}/x`, { headers })
      expect(refused.status, gateway.errorLog()).toBe(429)
      expect(refused.headers.get('x-keygate-code')).toBe('RATE_LIMITED')
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
      expect(Number(refused.headers.get('retry-after'))).toBeLessThanOrEqual(60)
      const before = stack.upstream.seen.length
      const apiError = await fetch(`${gateway.url}/__status/500`, { headers: { 'x-api-key': stack.key.key } })
      expect(apiError.status).toBe(500)
      expect(apiError.headers.get('x-upstream')).toBe('echo')
      expect(await apiError.json()).toMatchObject({ url: '/__status/500' })
      expect(stack.upstream.seen.length).toBe(before + 1)
    }
  })

  it('runs the sidecar example’s nginx.conf: the api is the verifier’s --api-id, whatever the client sends', async () => {
    const { key, otherApiKey, otherApiId, upstream } = stack
    expect((await fetch(`${example.url}/_gateway/healthz`)).status).toBe(200)
    const through = await fetch(`${example.url}/orders`, { headers: { 'x-api-key': key.key } })
    expect(through.status, example.errorLog()).toBe(200)
    expect(upstream.seen.at(-1)!.headers['x-keygate-key-id']).toBe(key.keyId)
    const forged = { 'x-api-key': otherApiKey.key, 'x-keygate-api-id': otherApiId }
    expect((await fetch(`${example.url}/orders`, { headers: forged })).status).toBe(403)
    expect((await fetch(`${example.url}/orders`)).status).toBe(401)
  })

  // Last: it stops Redis.
  it('passes the verifier’s 503 on when it fails closed (Redis gone, a key it has not seen)', async () => {
    await stack.redis.stop()
    const headers = { 'x-api-key': 'sk_never_seen_while_redis_is_down' }
    const direct = await fetch(`${stack.verifier.url}/v1/authorize`, {
      headers: { ...headers, 'x-keygate-api-id': stack.apiId },
    })
    expect(direct.status).toBe(503)
    expect(direct.headers.get('x-keygate-code')).toBe('UNAVAILABLE')
    for (const gateway of [nginx, example]) {
      const response = await fetch(`${gateway.url}/x`, { headers })
      expect(response.status, gateway.errorLog()).toBe(503)
      expect(response.headers.get('x-keygate-code')).toBe('UNAVAILABLE')
    }
  })
})
