import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startEchoUpstream, type EchoUpstream } from '../support/echo-upstream.js'
import { startNginx, type Nginx } from '../support/nginx.js'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

const ROOT_KEY = 'nginx-test-root-key-0123456789'

/**
 * The README's nginx configuration (auth_request → the verifier's /v1/authorize), run by a real nginx in
 * front of a real upstream, with the verifier and control plane as processes on a real Redis.
 */
function nginxServerBlock(port: number, verifierUrl: string, upstreamUrl: string, apiId: string): string {
  return `
  server {
    listen 127.0.0.1:${port};

    location / {
      auth_request /_keygate;
      # What the verifier found, passed on to the API:
      auth_request_set $keygate_key_id $upstream_http_x_keygate_key_id;
      auth_request_set $keygate_owner_id $upstream_http_x_keygate_owner_id;
      proxy_set_header X-Keygate-Key-Id $keygate_key_id;
      proxy_set_header X-Keygate-Owner-Id $keygate_owner_id;
      # The API never sees the key itself.
      proxy_set_header X-API-Key "";
      proxy_set_header Authorization "";
      proxy_pass ${upstreamUrl};
    }

    location = /_keygate {
      internal;
      proxy_pass ${verifierUrl}/v1/authorize;
      proxy_pass_request_body off;
      proxy_set_header Content-Length "";
      # Policy headers are set here, never taken from the client.
      proxy_set_header X-Keygate-Api-Id "${apiId}";
      proxy_set_header X-Keygate-Permissions "";
      proxy_set_header X-Keygate-Cost "";
    }
  }`
}

describe('forward-auth through a real nginx (auth_request)', () => {
  let redis: RedisServer
  let controlPlane: KeygateProcess
  let verifier: KeygateProcess
  let upstream: EchoUpstream
  let nginx: Nginx
  let apiId: string
  let otherApiKey: string
  let otherApiId: string
  let key: { keyId: string; key: string }

  const admin = async (path: string, body: unknown) => {
    const response = await fetch(`${controlPlane.url}/v1/${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status).toBe(200)
    return (await response.json()) as Record<string, string>
  }

  beforeAll(async () => {
    redis = await startRedisServer()
    controlPlane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
    })
    verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' })
    upstream = await startEchoUpstream()
    apiId = (await admin('apis.createApi', { name: 'behind-nginx' })).apiId!
    const otherApi = (otherApiId = (await admin('apis.createApi', { name: 'other' })).apiId!)
    key = (await admin('keys.createKey', { apiId, externalId: 'acme' })) as { keyId: string; key: string }
    otherApiKey = (await admin('keys.createKey', { apiId: otherApi })).key!
    nginx = await startNginx((port) => nginxServerBlock(port, verifier.url, upstream.url, apiId))
  })
  afterAll(async () => {
    await nginx?.stop()
    await upstream?.stop()
    await verifier?.stop()
    await controlPlane?.stop()
    await redis?.stop()
  })

  it('lets a valid key through with its id and owner, and without the key itself', async () => {
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
    const before = upstream.seen.length
    expect((await fetch(`${nginx.url}/orders`)).status).toBe(401)
    expect((await fetch(`${nginx.url}/orders`, { headers: { 'x-api-key': 'sk_not_a_real_key_0000' } })).status).toBe(
      401,
    )
    expect((await fetch(`${nginx.url}/orders`, { headers: { 'x-api-key': otherApiKey } })).status).toBe(403)
    // A client cannot pick its own policy: nginx overwrites the X-Keygate-* headers.
    expect(
      (await fetch(`${nginx.url}/orders`, { headers: { 'x-api-key': otherApiKey, 'x-keygate-api-id': otherApiId } }))
        .status,
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
    expect((await fetch(`${nginx.url}/x`, { headers: { 'x-api-key': key.key } })).status).toBe(200)
    await admin('keys.updateKey', { keyId: key.keyId, enabled: false })
    const disabledAt = performance.now()
    while ((await fetch(`${nginx.url}/x`, { headers: { 'x-api-key': key.key } })).status !== 401) {
      expect(performance.now() - disabledAt).toBeLessThan(5_000)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await admin('keys.updateKey', { keyId: key.keyId, enabled: true })
  })
})
