import { describe, expect, it } from 'vitest'
import { keygateStack } from '../support/keygate-stack.js'
import { jsonPoster, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { pollUntil } from '../support/wait-for.js'

const ROOT_KEY = 'ip-allowlist-root-key-0123456789'
const MAX_STALENESS_MS = 2_000
const post = jsonPoster(ROOT_KEY)
const redis = useRedisServer()
const startStack = keygateStack()

/** verifyKey (v1) on `base`, from this test (127.0.0.1), naming `forwardedFor` in X-Forwarded-For when given. */
async function verify(base: string, key: string, forwardedFor?: string): Promise<string> {
  const response = await fetch(`${base}/v1/keys.verifyKey`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body: JSON.stringify({ key }),
  })
  return ((await response.json()) as { code: string }).code
}

/** Forward-auth on `base`: the status and X-Keygate-Code. */
async function authorize(base: string, key: string, apiId: string, forwardedFor?: string) {
  const response = await fetch(`${base}/v1/authorize`, {
    headers: {
      'x-api-key': key,
      'x-keygate-api-id': apiId,
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
  })
  return [response.status, response.headers.get('x-keygate-code')]
}

/**
 * IP allow-lists on real processes: a key pinned to 10.0.0.0/8 is refused from 127.0.0.1 and accepted through a
 * trusted proxy (this test, on 127.0.0.1, acting as one) that names a 10.x address; the same header from a peer the
 * verifier does not trust changes nothing; an api's list set by updateApi reaches a verifier within the bound.
 */
describe('IP allow-lists on a control plane and verifiers', () => {
  it('refuses 127.0.0.1, believes a trusted proxy only, and applies an api list within the bound', async () => {
    const { controlPlane, verifiers } = await startStack({
      redisUrl: redis.url,
      rootKey: ROOT_KEY,
      maxStalenessMs: MAX_STALENESS_MS,
      verifiers: [
        { CLIENT_ADDRESS: 'forwarded', TRUSTED_PROXIES: '127.0.0.1/32' },
        { CLIENT_ADDRESS: 'forwarded', TRUSTED_PROXIES: '192.0.2.1/32' },
      ],
    })
    const [trusting, distrusting] = verifiers as [KeygateProcess, KeygateProcess]
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'pinned' })
    const { body: pinned } = await post(controlPlane.url, 'keys.createKey', {
      apiId: api.apiId,
      ipWhitelist: ['10.0.0.0/8'],
    })

    expect(await verify(trusting.url, pinned.key)).toBe('FORBIDDEN')
    expect(await verify(trusting.url, pinned.key, '10.1.2.3')).toBe('VALID')
    expect(await verify(trusting.url, pinned.key, '10.1.2.3, 127.0.0.1')).toBe('VALID')
    expect(await verify(trusting.url, pinned.key, '10.1.2.3, 192.0.2.9')).toBe('FORBIDDEN')
    expect(await verify(distrusting.url, pinned.key)).toBe('FORBIDDEN')
    expect(await verify(distrusting.url, pinned.key, '10.1.2.3')).toBe('FORBIDDEN')
    // The control plane reads the socket's address (its default): the header changes nothing there.
    expect(await verify(controlPlane.url, pinned.key, '10.1.2.3')).toBe('FORBIDDEN')
    // Forward-auth, served ahead of Fastify on a listening verifier, alike.
    expect(await authorize(trusting.url, pinned.key, api.apiId)).toEqual([403, 'FORBIDDEN'])
    expect(await authorize(trusting.url, pinned.key, api.apiId, '10.1.2.3')).toEqual([200, 'VALID'])
    expect(await authorize(distrusting.url, pinned.key, api.apiId, '10.1.2.3')).toEqual([403, 'FORBIDDEN'])

    // An api's list, set after its key has been verified (and cached) everywhere.
    const { body: open } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    expect(await verify(trusting.url, open.key)).toBe('VALID')
    expect(await verify(distrusting.url, open.key)).toBe('VALID')
    const sentAt = Date.now()
    const updated = await post(controlPlane.url, 'apis.updateApi', { apiId: api.apiId, ipWhitelist: ['10.0.0.0/8'] })
    expect(updated.status).toBe(200)
    const answeredAt = Date.now()
    const refusedAt: number[] = []
    for (const verifier of [trusting, distrusting]) {
      const refused = await pollUntil(
        async () => {
          const at = Date.now()
          if ((await verify(verifier.url, open.key)) === 'FORBIDDEN') return { at }
          expect(at - answeredAt, 'the api list reaches the verifier within the bound').toBeLessThan(MAX_STALENESS_MS)
          return undefined
        },
        "the api's list on the verifier",
        MAX_STALENESS_MS + 5_000,
        25,
      )
      refusedAt.push(refused.at)
    }
    console.log(
      `ip allow-list: the api's list refused on both verifiers ${Math.max(...refusedAt) - sentAt} ms after updateApi`,
    )
    expect(await verify(trusting.url, open.key, '10.9.9.9')).toBe('VALID')
    expect(await verify(distrusting.url, open.key, '10.9.9.9')).toBe('FORBIDDEN')
    // Removed again: accepted from anywhere on every verifier.
    expect((await post(controlPlane.url, 'apis.updateApi', { apiId: api.apiId, ipWhitelist: null })).status).toBe(200)
    for (const verifier of [trusting, distrusting]) {
      const deadline = Date.now() + MAX_STALENESS_MS
      await pollUntil(
        async () => {
          if ((await verify(verifier.url, open.key)) === 'VALID') return true
          expect(Date.now()).toBeLessThan(deadline)
          return false
        },
        'the key accepted again from anywhere',
        MAX_STALENESS_MS + 5_000,
        25,
      )
    }
  }, 30_000)
})
