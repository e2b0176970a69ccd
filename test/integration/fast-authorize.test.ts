import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { request } from 'undici'
import { monotonicClock } from '../../shared/clock.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import {
  capturedLogger,
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'

/**
 * /v1/authorize is answered ahead of Fastify (shared/http/fast-header-route.ts) on the server the verifier listens
 * with; inject() still goes through Fastify's route. A gateway must see the same status and headers either way.
 */
let backend: Backend
let controlPlane: TestServer
let app: TestServer['app']
let keyVerifier: TestServer['verifier']
let url: string
let apiId: string
const keys: Record<string, string> = {}
/** What the verifier logged. */
const logged = capturedLogger()
/** /v1/authorize requests Fastify answered: the fast path's must not count here. */
let throughFastify = 0
/** The wall clock of both servers, which the test moves past a key's expiry (the revocation bound's stays real). */
const clock = new ManualClock(Date.now())

beforeAll(async () => {
  backend = await openBackend()
  controlPlane = await startTestControlPlane({ backend, clock, elapsed: monotonicClock })
  // Bound to no api: a request without X-Keygate-Api-Id is Fastify's to refuse (and explain).
  const started = await startTestVerifier({
    backend,
    clock,
    elapsed: monotonicClock,
    log: logged.log,
    beforeReady: (verifierApp) =>
      verifierApp.addHook('onResponse', (req, _reply, done) => {
        if (req.url.startsWith('/v1/authorize')) throughFastify++
        done()
      }),
  })
  app = started.app
  keyVerifier = started.verifier
  url = await app.listen({ port: 0, host: '127.0.0.1' })
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const call = async (path: string, payload: object) =>
    (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
  apiId = (await call('apis.createApi', { name: 'fast-authorize' })).apiId
  keys.valid = (await call('keys.createKey', { apiId, ownerId: 'acme', permissions: ['read'] })).key
  keys.disabled = (await call('keys.createKey', { apiId, enabled: false })).key
  keys.expired = (await call('keys.createKey', { apiId, expires: clock.now() + 300 })).key
  keys.credits = (await call('keys.createKey', { apiId, remaining: 100 })).key
  keys.limited = (
    await call('keys.createKey', { apiId, ratelimit: { type: 'consistent', limit: 1, duration: 86_400_000 } })
  ).key
  await keyVerifier.pollNow()
  clock.advance(350)
})
afterAll(async () => {
  await app.close()
  await controlPlane.close()
  await backend.close()
})

interface Answer {
  status: number
  headers: Record<string, unknown>
  body: string
}

/** Headers as both paths send them, less what differs by design (the date, the request id) and by transport. */
function comparable(headers: Record<string, unknown>): Record<string, unknown> {
  const { date: _date, connection: _connection, 'keep-alive': _keepAlive, 'x-request-id': id, ...rest } = headers
  expect(id).toMatch(/^[A-Za-z0-9._-]+$/)
  return rest
}

async function overHttp(method: string, headers: Record<string, string>): Promise<Answer> {
  const response = await request(`${url}/v1/authorize`, { method: method as 'GET', headers })
  return { status: response.statusCode, headers: comparable(response.headers), body: await response.body.text() }
}

async function viaFastify(method: string, headers: Record<string, string>): Promise<Answer> {
  // The Host the HTTP request sends: error bodies link their docs at the address the request came to.
  const response = await app.inject({
    method: method as 'GET',
    url: '/v1/authorize',
    headers: { host: new URL(url).host, ...headers },
  })
  return { status: response.statusCode, headers: comparable(response.headers), body: response.body }
}

/** The body's request id differs by design: compared without it. */
const withoutRequestId = (body: string) => body.replace(/"requestId":"[^"]*"/, '"requestId":"…"')

describe('/v1/authorize ahead of Fastify', () => {
  const api = () => ({ 'x-keygate-api-id': apiId })
  const cases = (): [string, string, Record<string, string>][] => [
    ['valid key in X-API-Key', 'GET', { ...api(), 'x-api-key': keys.valid! }],
    ['valid key as a Bearer token', 'POST', { ...api(), authorization: `Bearer ${keys.valid}` }],
    ['any method', 'DELETE', { ...api(), 'x-api-key': keys.valid! }],
    ['HEAD', 'HEAD', { ...api(), 'x-api-key': keys.valid! }],
    ['HEAD without a key', 'HEAD', api()],
    ['HEAD with a disabled key', 'HEAD', { ...api(), 'x-api-key': keys.disabled! }],
    ['OPTIONS', 'OPTIONS', { ...api(), 'x-api-key': keys.valid! }],
    ['a Content-Length of 0', 'PUT', { ...api(), 'x-api-key': keys.valid!, 'content-length': '0' }],
    ['no key', 'GET', api()],
    ['an unknown key', 'GET', { ...api(), 'x-api-key': 'sk_not_a_key' }],
    ['a disabled key', 'GET', { ...api(), 'x-api-key': keys.disabled! }],
    ['an expired key', 'GET', { ...api(), 'x-api-key': keys.expired! }],
    ['another api', 'GET', { 'x-keygate-api-id': 'api_other', 'x-api-key': keys.valid! }],
    ['a permission it has', 'GET', { ...api(), 'x-api-key': keys.valid!, 'x-keygate-permissions': 'read' }],
    ['a permission it lacks', 'GET', { ...api(), 'x-api-key': keys.valid!, 'x-keygate-permissions': 'write' }],
    ['a key with credits, free', 'GET', { ...api(), 'x-api-key': keys.credits!, 'x-keygate-cost': '0' }],
    ['a key over its rate limit', 'GET', { ...api(), 'x-api-key': keys.limited! }],
    ['a key over 1,024 characters', 'GET', { ...api(), 'x-api-key': 'k'.repeat(1_025) }],
  ]

  it('answers every case with the status and headers the Fastify route gives, twice over', async () => {
    // Spend the limited key's one call first, so that both paths refuse it.
    await viaFastify('GET', { ...api(), 'x-api-key': keys.limited! })
    for (let pass = 0; pass < 2; pass++) {
      for (const [what, method, headers] of cases()) {
        const before = throughFastify
        const fast = await overHttp(method, headers)
        expect(throughFastify - before, what).toBe(0)
        const fastify = await viaFastify(method, headers)
        if (what === 'a key over its rate limit') {
          // The seconds to the window's end are read from the clock by each: they may be one apart.
          for (const name of ['retry-after', 'ratelimit-reset']) {
            expect(Math.abs(Number(fast.headers[name]) - Number(fastify.headers[name])), what).toBeLessThanOrEqual(1)
            delete fast.headers[name]
            delete fastify.headers[name]
          }
        }
        expect(fast, what).toStrictEqual(fastify)
      }
    }
  })

  it('leaves a request naming no api to Fastify, which refuses and explains it', async () => {
    const before = throughFastify
    const response = await request(`${url}/v1/authorize`, { headers: { 'x-api-key': keys.valid! } })
    expect(response.statusCode).toBe(403)
    expect(response.headers['x-keygate-code']).toBe('API_ID_REQUIRED')
    expect(await response.body.text()).toContain('--api-id')
    expect(throughFastify - before).toBe(1)
  })

  it('leaves a request with a body, or to a longer path, to Fastify', async () => {
    const before = throughFastify
    const withBody = await request(`${url}/v1/authorize`, {
      method: 'POST',
      headers: { ...api(), 'x-api-key': keys.valid!, 'content-type': 'text/plain' },
      body: 'hello',
    })
    expect(withBody.statusCode).toBe(200)
    await withBody.body.text()
    const envoy = await request(`${url}/v1/authorize/some/path`, { headers: { ...api(), 'x-api-key': keys.valid! } })
    expect(envoy.statusCode).toBe(200)
    await envoy.body.text()
    expect(throughFastify - before).toBe(2)
  })

  it("answers 503 in the contract's shape when the store cannot be read, as Fastify does", async () => {
    // Neither the key nor the revisions (an unknown key's NOT_FOUND needs a fresh poll instead of a read).
    const read = backend.store.keys.getKeyByHash.bind(backend.store.keys)
    const poll = backend.store.changes.readRevisions.bind(backend.store.changes)
    const down = async (): Promise<never> => {
      throw new StoreUnavailableError('the store cannot be reached', { cause: new Error('ECONNREFUSED 127.0.0.1:9') })
    }
    const linesBefore = logged.lines.length
    backend.store.keys.getKeyByHash = down
    backend.store.changes.readRevisions = down
    try {
      // HEAD too: the error's headers (its Content-Length the body's), as Fastify sends them, and no body (inject
      // hands HEAD a body that Node's server would not send).
      for (const method of ['GET', 'HEAD']) {
        const headers = { ...api(), 'x-api-key': `sk_never_seen_before_by_this_verifier_${method}` }
        const fast = await overHttp(method, headers)
        const fastify = await viaFastify(method, headers)
        expect(fast.status, method).toBe(503)
        if (method === 'HEAD') expect(fast.body).toBe('')
        else expect(withoutRequestId(fast.body)).toBe(withoutRequestId(fastify.body))
        expect({ ...fast, body: '' }, method).toStrictEqual({ ...fastify, body: '' })
      }
      // Each 503 is logged by its cause, the store's failure (its own cause in the stack), on either path.
      const answered = logged.lines
        .slice(linesBefore)
        .map((line) => JSON.parse(line) as { level: number; msg: string; requestId?: string; err?: { stack?: string } })
        .filter((line) => line.level === 40 && line.requestId !== undefined)
      expect(answered.map((line) => line.msg)).toEqual(Array(4).fill('store unavailable'))
      for (const line of answered) expect(line.err?.stack).toContain('ECONNREFUSED 127.0.0.1:9')
    } finally {
      backend.store.keys.getKeyByHash = read
      backend.store.changes.readRevisions = poll
    }
  })

  it('counts its answers in the same metrics', async () => {
    const count = async () =>
      Number(
        (await app.inject({ method: 'GET', url: '/metrics' })).body
          .split('\n')
          .find(
            (l) =>
              l.startsWith('keygate_http_requests_total{') &&
              l.includes('route="/v1/authorize"') &&
              l.includes('method="GET"') &&
              l.includes('status="401"'),
          )
          ?.split(' ')
          .pop() ?? 0,
      )
    const before = await count()
    await overHttp('GET', { ...api(), 'x-api-key': 'sk_nope' })
    await overHttp('GET', api())
    expect(await count()).toBe(before + 2)
  })

  it('counts each method and status on its own series: a GET 200 (counted on its kept cell), HEAD 200, GET 401', async () => {
    const series = async () => {
      const counts: Record<string, number> = {}
      for (const l of (await app.inject({ method: 'GET', url: '/metrics' })).body.split('\n')) {
        const found = /^keygate_http_requests_total\{(.*)\} (\S+)$/.exec(l)
        if (!found || !found[1]!.includes('route="/v1/authorize"')) continue
        const method = /method="(\w+)"/.exec(found[1]!)![1]!
        const status = /status="(\d+)"/.exec(found[1]!)![1]!
        counts[`${method} ${status}`] = Number(found[2])
      }
      return counts
    }
    const reachedFastify = throughFastify
    const before = await series()
    const sent: [string, Record<string, string>, number, string][] = [
      ['GET', { ...api(), 'x-api-key': keys.valid! }, 200, 'GET 200'],
      ['GET', { ...api(), 'x-api-key': keys.valid! }, 200, 'GET 200'],
      ['HEAD', { ...api(), 'x-api-key': keys.valid! }, 200, 'HEAD 200'],
      ['GET', { ...api(), 'x-api-key': 'sk_nope' }, 401, 'GET 401'],
      ['HEAD', { ...api(), 'x-api-key': 'sk_nope' }, 401, 'HEAD 401'],
    ]
    const expected = { ...before }
    for (const [method, headers, status, key] of sent) {
      expect((await overHttp(method, headers)).status, key).toBe(status)
      expected[key] = (expected[key] ?? 0) + 1
    }
    expect(throughFastify).toBe(reachedFastify)
    expect(await series()).toStrictEqual(expected)
  })

  it('refuses a key as soon as it is disabled, though its answer was kept for its unchanged verdict', async () => {
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
    const created = (
      await controlPlane.app.inject({ method: 'POST', url: '/v1/keys.createKey', headers, payload: { apiId } })
    ).json()
    await keyVerifier.pollNow()
    const gateway = { ...api(), 'x-api-key': created.key }
    // A miss, then hits: the hits answer the memoised verdict's kept answer, on both paths.
    for (let i = 0; i < 3; i++) {
      expect((await overHttp('GET', gateway)).status).toBe(200)
      expect((await viaFastify('GET', gateway)).status).toBe(200)
    }
    await controlPlane.app.inject({
      method: 'POST',
      url: '/v1/keys.updateKey',
      headers,
      payload: { keyId: created.keyId, enabled: false },
    })
    await keyVerifier.pollNow()
    for (let i = 0; i < 3; i++) {
      const fast = await overHttp('GET', gateway)
      expect(fast.status).toBe(401)
      expect(fast.headers['x-keygate-code']).toBe('DISABLED')
      expect((await viaFastify('GET', gateway)).status).toBe(401)
    }
  })

  // Last: the server does not accept requests after this.
  it('steps aside while the server shuts down: Fastify answers 503 with Connection: close', async () => {
    // A request it took before shutdown began (its key being read) is answered with Connection: close, as Fastify's
    // are: its keep-alive connection must not linger for a next request.
    const read = backend.store.keys.getKeyByHash.bind(backend.store.keys)
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    let reading = false
    backend.store.keys.getKeyByHash = async (hash) => {
      reading = true
      await held
      return read(hash)
    }
    // A key that exists and was never verified: read from the store (an unknown key is answered by the filter of
    // known hashes instead, without a read to hold).
    const fresh = (
      await controlPlane.app.inject({
        method: 'POST',
        url: '/v1/keys.createKey',
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload: { apiId },
      })
    ).json<{ key: string }>().key
    try {
      const inFlight = request(`${url}/v1/authorize`, { headers: { ...api(), 'x-api-key': fresh } })
      await waitFor(() => reading, 'the key read to begin')
      app.stopAccepting()
      release()
      const answered = await inFlight
      expect(answered.statusCode).toBe(200)
      expect(answered.headers.connection).toBe('close')
      await answered.body.dump()
    } finally {
      backend.store.keys.getKeyByHash = read
    }
    const before = throughFastify
    const response = await request(`${url}/v1/authorize`, { headers: { ...api(), 'x-api-key': keys.valid! } })
    expect(response.statusCode).toBe(503)
    expect(response.headers.connection).toBe('close')
    expect(((await response.body.json()) as { error: { code: string } }).error.code).toBe('UNAVAILABLE')
    expect(throughFastify - before).toBe(1)
  })
})
