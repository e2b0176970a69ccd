import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startCaddy, type Caddy } from '../support/caddy.js'
import { startGatewayStack, type GatewayStack } from '../support/gateway-stack.js'
import { docBlock } from '../support/doc-blocks.js'
import { clearOfWindowEdge } from '../support/window-edge.js'
import { pollUntil } from '../support/wait-for.js'

const portOf = (url: string) => new URL(url).port

/**
 * The Caddy configuration of docs/gateways.md (forward_auth → the verifier's /v1/authorize), as it is there with the
 * site address, the addresses and the api id filled in, run by a real Caddy (Debian's 2.6.2) in front of a real
 * upstream, with the verifier and control plane as processes on a real Redis.
 */
describe('forward-auth through a real Caddy (forward_auth), configured as docs/gateways.md says', () => {
  let stack: GatewayStack
  let caddy: Caddy

  beforeAll(async () => {
    stack = await startGatewayStack()
    const { verifier, upstream, apiId } = stack
    caddy = await startCaddy((port) =>
      docBlock('docs/gateways.md', 'Forward-auth', 'caddyfile', [
        ['api.example.com {', `http://127.0.0.1:${port} {`],
        ['127.0.0.1:7071', `127.0.0.1:${portOf(verifier.url)}`],
        ['127.0.0.1:3000', `127.0.0.1:${portOf(upstream.url)}`],
        ['"api_…"', `"${apiId}"`],
      ]),
    )
  })
  afterAll(async () => {
    await caddy?.stop()
    await stack?.stop()
  })

  it('lets a valid key through with its id and owner, body and all, without the key or identity a client made up', async () => {
    const { upstream, key } = stack
    const forged = { 'x-keygate-key-id': 'key_forged', 'x-keygate-owner-id': 'root' }
    for (const headers of [{ 'x-api-key': key.key }, { authorization: `Bearer ${key.key}` }] as Record<
      string,
      string
    >[]) {
      const before = upstream.seen.length
      const response = await fetch(`${caddy.url}/orders?page=2`, {
        method: 'POST',
        headers: { ...headers, ...forged, 'content-type': 'application/json' },
        body: '{"item":17}',
      })
      expect(response.status, caddy.log()).toBe(200)
      expect(response.headers.get('x-upstream')).toBe('echo')
      const seen = upstream.seen.slice(before)
      expect(seen).toHaveLength(1)
      expect(seen[0]).toMatchObject({ method: 'POST', url: '/orders?page=2', body: '{"item":17}' })
      expect(seen[0]!.headers['x-keygate-key-id']).toBe(key.keyId)
      expect(seen[0]!.headers['x-keygate-owner-id']).toBe('acme')
      expect(JSON.stringify(seen[0]!.headers)).not.toContain(key.key)
    }
  })

  it('passes no owner id for a key without one (neither the client’s nor Caddy 2.6’s placeholder text)', async () => {
    const ownerless = await stack.newKey()
    const response = await fetch(`${caddy.url}/x`, {
      headers: { 'x-api-key': ownerless.key, 'x-keygate-owner-id': 'root' },
    })
    expect(response.status).toBe(200)
    const seen = stack.upstream.seen.at(-1)!
    expect(seen.headers['x-keygate-key-id']).toBe(ownerless.keyId)
    expect(seen.headers['x-keygate-owner-id']).toBeUndefined()
  })

  it('refuses no key and an unknown key with 401, a key of another api with 403, whatever policy the client sends', async () => {
    const { upstream, key, otherApiKey, otherApiId } = stack
    const before = upstream.seen.length
    const missing = await fetch(`${caddy.url}/orders`)
    expect(missing.status).toBe(401)
    expect(missing.headers.get('www-authenticate')).toMatch(/^Bearer realm="keygate"/)
    expect(missing.headers.get('x-keygate-code')).toBe('MISSING_KEY')
    const unknown = await fetch(`${caddy.url}/orders`, { headers: { 'x-api-key': 'sk_not_a_real_key_0000' } })
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('x-keygate-code')).toBe('NOT_FOUND')
    for (const headers of [
      { 'x-api-key': otherApiKey.key },
      { 'x-api-key': otherApiKey.key, 'x-keygate-api-id': otherApiId },
    ] as Record<string, string>[]) {
      const other = await fetch(`${caddy.url}/orders`, { headers })
      expect(other.status).toBe(403)
      expect(other.headers.get('x-keygate-code')).toBe('FORBIDDEN')
    }
    expect(upstream.seen.length).toBe(before)
    // Nor can a client add a requirement or a cost: Caddy removes those headers.
    const valid = await fetch(`${caddy.url}/orders`, {
      headers: { 'x-api-key': key.key, 'x-keygate-permissions': 'admin.everything', 'x-keygate-cost': '1000' },
    })
    expect(valid.status).toBe(200)
  })

  it('passes the verifier’s 429 on with Retry-After and RateLimit-*, and the API’s own 500 unchanged', async () => {
    const limited = await stack.newKey({ ratelimit: { limit: 1, duration: 60_000 } })
    const headers = { 'x-api-key': limited.key }
    await clearOfWindowEdge(60_000)
    expect((await fetch(`${caddy.url}/x`, { headers })).status).toBe(200)
    const refused = await fetch(`${caddy.url}/x`, { headers })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('x-keygate-code')).toBe('RATE_LIMITED')
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(refused.headers.get('ratelimit-limit')).toBe('1')
    const apiError = await fetch(`${caddy.url}/__status/500`, { headers: { 'x-api-key': stack.key.key } })
    expect(apiError.status).toBe(500)
    expect(apiError.headers.get('x-upstream')).toBe('echo')
  })

  it('stops letting a key through as soon as it is disabled', async () => {
    const { key, admin } = stack
    await admin('keys.updateKey', { keyId: key.keyId, enabled: false })
    const disabledAt = performance.now()
    await pollUntil(
      async () => {
        if ((await fetch(`${caddy.url}/x`, { headers: { 'x-api-key': key.key } })).status === 401) return true
        expect(performance.now() - disabledAt).toBeLessThan(5_000)
        return false
      },
      'the disabled key refused',
      10_000,
      5,
    )
    await admin('keys.updateKey', { keyId: key.keyId, enabled: true })
  })

  // Last: it stops Redis.
  it('passes the verifier’s 503 on when it fails closed (Redis gone, a key it has not seen)', async () => {
    await stack.redis.stop()
    const response = await fetch(`${caddy.url}/x`, { headers: { 'x-api-key': 'sk_never_seen_while_redis_is_down' } })
    expect(response.status).toBe(503)
    expect(response.headers.get('x-keygate-code')).toBe('UNAVAILABLE')
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE')
  })
})
