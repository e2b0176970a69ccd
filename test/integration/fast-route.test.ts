import { Readable } from 'node:stream'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { monotonicClock } from '../../shared/clock.js'
import {
  answerOverHttp,
  answerThroughFastify,
  anyBodyWith,
  anyFieldValue,
  whileStoreIsDown,
  type PathAnswer,
} from '../support/verify-paths.js'
import {
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'

/**
 * The verifier answers verifyKey ahead of Fastify (shared/http/fast-route.ts) on the server it listens with;
 * inject() still goes through Fastify's route. Every answer must be the same either way: status, error shape
 * and message, verdict, headers. This holds the two paths together, for chosen and for generated bodies.
 */
let backend: Backend
let controlPlane: TestServer
let verifier: Pick<TestServer, 'app' | 'verifier' | 'close'>
let url: string
const keys: Record<string, string> = {}
/** verifyKey requests Fastify answered (its onResponse hook ran): the fast path's answers must not count here. */
let throughFastifyCount = 0
/** The wall clock of both servers, which the test moves past a key's expiry (the revocation bound's stays real). */
const clock = new ManualClock(Date.now())

beforeAll(async () => {
  backend = await openBackend()
  controlPlane = await startTestControlPlane({ backend, clock, elapsed: monotonicClock })
  // A hook added before ready() counts what reaches Fastify. Closing the verifier leaves the test's backend open.
  verifier = await startTestVerifier({
    backend,
    clock,
    elapsed: monotonicClock,
    beforeReady: (app) =>
      app.addHook('onResponse', (request, _reply, done) => {
        if (request.url === '/v1/keys.verifyKey') throughFastifyCount++
        done()
      }),
  })
  url = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const call = async (path: string, payload: object) =>
    (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
  const api = await call('apis.createApi', { name: 'fast' })
  keys.valid = (
    await call('keys.createKey', { apiId: api.apiId, name: 'n', meta: { a: 1 }, permissions: ['read'], roles: ['r'] })
  ).key
  // Characters of 2, 3 and 4 bytes in UTF-8 in what the answer repeats: Content-Length counts bytes, not characters.
  keys.unicode = (
    await call('keys.createKey', { apiId: api.apiId, name: 'clé 鍵 🔑', meta: { note: 'ünïcødé 🔑' } })
  ).key
  const disabled = await call('keys.createKey', { apiId: api.apiId, enabled: false })
  keys.disabled = disabled.key
  keys.expired = (await call('keys.createKey', { apiId: api.apiId, expires: Date.now() + 60_000 })).key
  keys.apiId = api.apiId
  await verifier.verifier.pollNow()
})
afterAll(async () => {
  await verifier.close()
  await controlPlane.close()
  await backend.close()
})

type Answer = PathAnswer

/** Over HTTP: the fast path (when it takes the request). */
const overHttp = (body: string, headers?: Record<string, string>) =>
  answerOverHttp(url, '/v1/keys.verifyKey', body, headers)

/** Through inject: Fastify's route. */
const throughFastify = (body: string, headers?: Record<string, string>) =>
  answerThroughFastify(verifier.app, new URL(url).host, '/v1/keys.verifyKey', body, headers)

/** The two answers with their request ids taken out (they differ by design), and checks on those ids. */
async function both(body: string): Promise<[Omit<Answer, 'requestId'>, Omit<Answer, 'requestId'>]> {
  const answers = [await overHttp(body), await throughFastify(body)]
  return answers.map(({ requestId, ...answer }) => {
    expect(requestId).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]{22}$/)
    const inner = answer.body.error ?? answer.body
    expect(inner.requestId).toBe(requestId)
    delete inner.requestId
    return answer
  }) as [Omit<Answer, 'requestId'>, Omit<Answer, 'requestId'>]
}

describe('verifyKey ahead of Fastify', () => {
  const chosen = () => [
    JSON.stringify({ key: keys.valid }),
    JSON.stringify({ key: keys.valid, apiId: keys.apiId }),
    JSON.stringify({ key: keys.valid, apiId: 'api_other' }),
    JSON.stringify({ key: keys.valid, authorization: { permissions: 'read' } }),
    JSON.stringify({ key: keys.valid, authorization: { permissions: { and: ['read', 'write'] } } }),
    JSON.stringify({ key: keys.valid, authorization: { permissions: { nope: 1 } } }),
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'x' }] }),
    // Free (cost 0), so that both routes answer alike; a day's window, so that both see the same reset.
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: '10/10s', limit: 1, duration: 86_400_000, cost: 0 }] }),
    // Refused every time (the cost is over the limit): RATE_LIMITED with Unkey-Ratelimit-Triggered on both paths; a
    // day's window too, so that both answers carry the same reset.
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'tight', limit: 1, duration: 86_400_000, cost: 2 }] }),
    JSON.stringify({ key: keys.unicode }),
    JSON.stringify({ key: keys.disabled }),
    JSON.stringify({ key: keys.expired }),
    JSON.stringify({ key: 'sk_not_a_key' }),
    JSON.stringify({ key: '' }),
    JSON.stringify({ key: 'x'.repeat(1025) }),
    JSON.stringify({ key: 1 }),
    JSON.stringify({ key: keys.valid, extra: true }),
    JSON.stringify({}),
    '[]',
    '"text"',
    'null',
    '7',
    '{',
    '{"key": "a",}',
    '\u0000',
    '{"key":"a","__proto__":{"polluted":true}}',
    '{"key":"a","constructor":{"prototype":{"polluted":true}}}',
    '{"key":"\ud800"}',
    JSON.stringify({ key: 'a', remaining: { cost: -1 } }),
    JSON.stringify({ key: 'a', tags: Array(11).fill('t') }),
  ]

  it('answers every chosen body exactly as the Fastify route does', async () => {
    for (const body of chosen()) {
      const before = throughFastifyCount
      const [fast, fastify] = await both(body)
      expect(fast, body).toStrictEqual(fastify)
      expect(fast.status, body).toBeLessThan(500)
      // The HTTP answer came from the fast path (only the inject went through Fastify).
      expect(throughFastifyCount - before, body).toBe(1)
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('names the rate limit that refused a call in Unkey-Ratelimit-Triggered, on both paths, and only then', async () => {
    const [fast, fastify] = await both(
      JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'tight', limit: 1, duration: 86_400_000, cost: 2 }] }),
    )
    expect(fast).toStrictEqual(fastify)
    expect(fast).toMatchObject({ body: { code: 'RATE_LIMITED' }, triggered: 'tight' })
    expect(fast.body).not.toHaveProperty('triggeredLimit')
    const [valid] = await both(JSON.stringify({ key: keys.valid }))
    expect(valid).toMatchObject({ body: { code: 'VALID' }, triggered: undefined })
  })

  it('says where a body stops being JSON, on both paths', async () => {
    const [fast, fastify] = await both('{"key": "a",}')
    expect(fast).toStrictEqual(fastify)
    expect(fast.body.error.message).toBe(
      "body: is not valid JSON: unexpected '}' at position 12 (expected a property name in double quotes)",
    )
    const [poisoned] = await both('{"key":"a","__proto__":{"polluted":true}}')
    expect(poisoned.body.error.message).toBe('body: has a __proto__ or constructor.prototype key, which is refused')
  })

  it('decodes a body that is not valid UTF-8 as Fastify does', async () => {
    const bytes = Buffer.concat([Buffer.from('{"key":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}')])
    const fast = await request(`${url}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: bytes,
    })
    const fastify = await verifier.app.inject({
      method: 'POST',
      url: '/v1/keys.verifyKey',
      headers: { host: new URL(url).host, 'content-type': 'application/json' },
      payload: bytes,
    })
    const strip = (body: Record<string, any>) => ({ ...body, requestId: undefined })
    expect(fast.statusCode).toBe(fastify.statusCode)
    expect(strip((await fast.body.json()) as Record<string, any>)).toStrictEqual(strip(fastify.json()))
  })

  it("answers 503 in the contract's shape when the store cannot be read, as Fastify does", async () => {
    await whileStoreIsDown(backend.store, async () => {
      const [fast, fastify] = await both(JSON.stringify({ key: 'sk_never_seen_before' }))
      expect(fast).toStrictEqual(fastify)
      expect(fast.status).toBe(503)
    })
  })

  it('answers generated bodies exactly as the Fastify route does', async () => {
    const value = anyFieldValue
    const body = anyBodyWith({
      key: fc.oneof(fc.constantFrom(keys.valid!, keys.disabled!, 'sk_nope'), value),
      apiId: value,
      tags: value,
      authorization: value,
      remaining: value,
      ratelimit: value,
      ratelimits: value,
    })
    await fc.assert(
      fc.asyncProperty(body, async (text) => {
        const [fast, fastify] = await both(text)
        expect(fast).toStrictEqual(fastify)
      }),
      { seed: 20261122, numRuns: 300 },
    )
  })

  it('leaves what it does not take to Fastify: other content types, no Content-Length, oversized and empty bodies', async () => {
    const before = throughFastifyCount
    expect((await overHttp('{"key":"a"}', { 'content-type': 'text/plain' })).status).toBe(415)
    expect(throughFastifyCount).toBe(before + 1)
    expect((await overHttp('', { 'content-type': 'application/json' })).body.error.message).toBe(
      (await throughFastify('', { 'content-type': 'application/json' })).body.error.message,
    )
    const big = JSON.stringify({ key: 'x'.repeat(1_100_000) })
    expect((await overHttp(big)).status).toBe(413)
    // Chunked: no Content-Length, so Fastify reads it (and its body limit applies).
    const chunked = await request(`${url}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.from([JSON.stringify({ key: keys.valid })]),
    })
    expect(chunked.statusCode).toBe(200)
    expect(((await chunked.body.json()) as { valid: boolean }).valid).toBe(true)
  })

  it("answers an unchanged key's repeated verifications alike, and follows its changes, expiry and the api asked", async () => {
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
    const call = async (path: string, payload: object) =>
      (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const expires = clock.now() + 1_500
    const created = await call('keys.createKey', { apiId: keys.apiId, name: 'before', expires })
    await verifier.verifier.pollNow()
    const body = JSON.stringify({ key: created.key })
    // The same verdict object answers every time (serialised once): each answer still has its own request id.
    const first = await overHttp(body)
    const second = await overHttp(body)
    expect(first.body).toMatchObject({ valid: true, code: 'VALID', name: 'before', requestId: first.requestId })
    expect(second.body.requestId).toBe(second.requestId)
    expect(second.requestId).not.toBe(first.requestId)
    expect({ ...second.body, requestId: undefined }).toStrictEqual({ ...first.body, requestId: undefined })
    // An echoed X-Request-Id is the answer's too.
    const echoed = await overHttp(body, { 'content-type': 'application/json', 'x-request-id': 'client-id.7' })
    expect(echoed.body.requestId).toBe('client-id.7')
    // Ids of other lengths, then a generated one again: each answer's length follows its own id.
    for (const id of ['a', 'client-id.7-and-some-more', 'x'.repeat(128)]) {
      expect((await overHttp(body, { 'content-type': 'application/json', 'x-request-id': id })).body.requestId).toBe(id)
    }
    expect((await overHttp(body)).body.requestId).toMatch(/^req_/)
    // The api asked about is part of the verdict: asking for another api, then none, then another again.
    for (const [apiId, code] of [
      ['api_other', 'FORBIDDEN'],
      [undefined, 'VALID'],
      ['api_other', 'FORBIDDEN'],
      [keys.apiId, 'VALID'],
    ] as const) {
      const [fast, fastify] = await both(JSON.stringify({ key: created.key, apiId }))
      expect(fast).toStrictEqual(fastify)
      expect(fast.body.code).toBe(code)
    }
    // A change replaces the cached record: the next answer is the new one, as Fastify's.
    await call('keys.updateKey', { keyId: created.keyId, name: 'after' })
    await verifier.verifier.pollNow()
    const [renamed, renamedByFastify] = await both(body)
    expect(renamed).toStrictEqual(renamedByFastify)
    expect(renamed.body).toMatchObject({ code: 'VALID', name: 'after' })
    // Expiry is judged on every request, whatever was answered before.
    clock.advance(expires - clock.now() + 50)
    const [expired, expiredByFastify] = await both(body)
    expect(expired).toStrictEqual(expiredByFastify)
    expect(expired.body).toMatchObject({ valid: false, code: 'EXPIRED', name: 'after' })
  })

  /** keygate_http_requests_total for POST /v1/keys.verifyKey with this status, read from /metrics (0 if absent). */
  const verifyKeyRequestsCounted = async (status: number) =>
    Number(
      (await verifier.app.inject({ method: 'GET', url: '/metrics' })).body
        .split('\n')
        .find(
          (l) =>
            l.startsWith('keygate_http_requests_total{') &&
            l.includes('route="/v1/keys.verifyKey"') &&
            l.includes('method="POST"') &&
            l.includes(`status="${status}"`),
        )
        ?.split(' ')
        .pop() ?? 0,
    )

  it('counts its answers in the same metrics', async () => {
    const before = await verifyKeyRequestsCounted(200)
    const reachedFastify = throughFastifyCount
    await overHttp(JSON.stringify({ key: keys.valid }))
    await overHttp(JSON.stringify({ key: 'sk_nope' }))
    expect(await verifyKeyRequestsCounted(200)).toBe(before + 2)
    expect(throughFastifyCount).toBe(reachedFastify)
  })

  it('counts its error answers on their own status, not on the 200s', async () => {
    const [ok, refused] = [await verifyKeyRequestsCounted(200), await verifyKeyRequestsCounted(400)]
    const reachedFastify = throughFastifyCount
    // A body the schema refuses: a 400, answered by the fast path.
    expect((await overHttp(JSON.stringify({ key: 5 }))).status).toBe(400)
    expect(throughFastifyCount).toBe(reachedFastify)
    expect(await verifyKeyRequestsCounted(400)).toBe(refused + 1)
    expect(await verifyKeyRequestsCounted(200)).toBe(ok)
  })

  it('steps aside while the server shuts down: Fastify answers 503 with Connection: close', async () => {
    verifier.app.stopAccepting()
    const response = await request(`${url}/v1/keys.verifyKey`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: keys.valid }),
    })
    expect(response.statusCode).toBe(503)
    expect(response.headers.connection).toBe('close')
    expect(((await response.body.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE')
  })
})
