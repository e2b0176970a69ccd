import net from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import {
  answerOverHttp,
  answerThroughFastify,
  anyBodyWith,
  anyFieldValue,
  requestsCounted,
  whileStoreIsDown,
  type PathAnswer,
} from '../support/verify-paths.js'

/**
 * v2's keys.verifyKey is served ahead of Fastify on a listening verifier, as v1's is (shared/http/fast-route.ts), from
 * the same endpoint definition as its Fastify route. Every answer must be the same either way — status, problem body,
 * envelope, content type, headers — for every root key (missing, malformed, unknown, limited, allowed) and every body.
 */
const PATH = '/v2/keys.verifyKey'
let backend: Backend
let controlPlane: TestServer
let verifier: Pick<TestServer, 'app' | 'verifier' | 'close'>
let url: string
const keys: Record<string, string> = {}
const rootKeys: Record<string, string | undefined> = {}
/** v2 verifyKey requests Fastify answered (its onResponse hook ran): the fast path's answers must not count here. */
let throughFastifyCount = 0

beforeAll(async () => {
  backend = await openBackend()
  controlPlane = await startTestControlPlane({ backend })
  verifier = await startTestVerifier({
    backend,
    beforeReady: (app) =>
      app.addHook('onResponse', (request, _reply, done) => {
        if (request.url === PATH) throughFastifyCount++
        done()
      }),
  })
  url = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
  const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
  const call = async (path: string, payload: object) =>
    (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
  const api = await call('apis.createApi', { name: 'fast v2' })
  const other = await call('apis.createApi', { name: 'another' })
  await call('identities.createIdentity', {
    externalId: 'acme',
    meta: { plan: 'pro' },
    ratelimits: [{ name: 'shared', limit: 100, duration: 86_400_000 }],
  })
  keys.valid = (
    await call('keys.createKey', {
      apiId: api.apiId,
      name: 'n',
      meta: { a: 1 },
      externalId: 'acme',
      permissions: ['read'],
      roles: ['r'],
    })
  ).key
  keys.unicode = (await call('keys.createKey', { apiId: api.apiId, name: 'clé 鍵 🔑', meta: { note: 'ü 🔑' } })).key
  keys.disabled = (await call('keys.createKey', { apiId: api.apiId, enabled: false })).key
  keys.credits = (await call('keys.createKey', { apiId: api.apiId, remaining: 5 })).key
  keys.other = (await call('keys.createKey', { apiId: other.apiId })).key
  const rootKeyWith = async (permissions: string[]) => (await call('rootKeys.createRootKey', { permissions })).key
  rootKeys.bootstrap = `Bearer ${TEST_ROOT_KEY}`
  rootKeys.allowed = `Bearer ${await rootKeyWith(['api.*.verify_key'])}`
  rootKeys.limited = `Bearer ${await rootKeyWith([`api.${other.apiId}.verify_key`])}`
  rootKeys.unknown = 'Bearer kgroot_not_a_root_key'
  rootKeys.malformed = 'Basic abc'
  rootKeys.missing = undefined
  await verifier.verifier.pollNow()
})
afterAll(async () => {
  await verifier.close()
  await controlPlane.close()
  await backend.close()
})

const headersWith = (authorization: string | undefined) => ({
  'content-type': 'application/json',
  ...(authorization === undefined ? {} : { authorization }),
})

/** The answers of both paths with their request ids checked and taken out (they differ by design). */
async function both(body: string, authorization: string | undefined): Promise<[PathAnswer, PathAnswer]> {
  const headers = headersWith(authorization)
  const answers = [
    await answerOverHttp(url, PATH, body, headers),
    await answerThroughFastify(verifier.app, new URL(url).host, PATH, body, headers),
  ]
  return answers.map(({ requestId, ...answer }) => {
    expect(requestId).toMatch(/^req_[1-9A-HJ-NP-Za-km-z]{22}$/)
    // v2 carries the id in `meta`, answers and problem bodies alike.
    expect(answer.body.meta).toStrictEqual({ requestId })
    delete answer.body.meta
    return answer
  }) as [PathAnswer, PathAnswer]
}

describe('v2 keys.verifyKey ahead of Fastify', () => {
  const chosen = () => [
    JSON.stringify({ key: keys.valid }),
    JSON.stringify({ key: keys.valid, permissions: 'read' }),
    JSON.stringify({ key: keys.valid, permissions: 'read AND (write OR r)' }),
    JSON.stringify({ key: keys.valid, permissions: 'read AND (' }),
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'nope' }] }),
    // Refused every time (the cost is over the limit), in a day's window so that both answers carry the same reset.
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'tight', limit: 1, duration: 86_400_000, cost: 2 }] }),
    JSON.stringify({ key: keys.valid, ratelimits: [{ name: 'shared', cost: 0 }] }),
    JSON.stringify({ key: keys.valid, tags: ['a'], migrationId: 'sha256' }),
    JSON.stringify({ key: keys.unicode }),
    JSON.stringify({ key: keys.disabled }),
    JSON.stringify({ key: keys.credits, credits: { cost: 0 } }),
    JSON.stringify({ key: keys.other }),
    JSON.stringify({ key: 'sk_not_a_key' }),
    JSON.stringify({ key: '' }),
    JSON.stringify({ key: 'x'.repeat(513) }),
    JSON.stringify({ key: keys.valid, extra: true }),
    JSON.stringify({ key: keys.valid, tags: Array(21).fill('t') }),
    JSON.stringify({}),
    '[]',
    'null',
    '{',
    '{"key":"a","__proto__":{"polluted":true}}',
  ]

  it('answers every chosen body, with every kind of root key, exactly as the Fastify route does', async () => {
    for (const [name, authorization] of Object.entries(rootKeys)) {
      for (const body of chosen()) {
        const before = throughFastifyCount
        const [fast, fastify] = await both(body, authorization)
        expect(fast, `${name}: ${body}`).toStrictEqual(fastify)
        expect(fast.status, `${name}: ${body}`).toBeLessThan(500)
        // The HTTP answer came from the fast path (only the inject went through Fastify).
        expect(throughFastifyCount - before, `${name}: ${body}`).toBe(1)
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  })

  it('checks the root key before the body, answers the key in the envelope, and hides keys beyond its reach', async () => {
    const [missing] = await both('{', rootKeys.missing)
    expect(missing).toMatchObject({ status: 400, authenticate: 'Bearer' })
    expect(missing.body.error.type).toBe('https://unkey.com/docs/errors/unkey/authentication/missing')
    const [unknown] = await both(JSON.stringify({ key: keys.valid }), rootKeys.unknown)
    expect(unknown).toMatchObject({ status: 401, authenticate: 'Bearer' })
    const [valid] = await both(JSON.stringify({ key: keys.valid }), rootKeys.allowed)
    expect(valid.status).toBe(200)
    expect(valid.body.data).toMatchObject({ valid: true, code: 'VALID', identity: { externalId: 'acme' } })
    const [hidden] = await both(JSON.stringify({ key: keys.valid }), rootKeys.limited)
    expect(hidden.body).toStrictEqual({ data: { valid: false, code: 'NOT_FOUND' } })
    const [reachable] = await both(JSON.stringify({ key: keys.other }), rootKeys.limited)
    expect(reachable.body.data).toMatchObject({ valid: true, code: 'VALID' })
  })

  it('answers a refused root key before the body ends, as Fastify does, and keeps the connection', async () => {
    const { port } = new URL(url)
    /** Sends the head and part of a 60-byte body; resolves with the first answer, then with what follows the rest. */
    const exchange = (authorization: string, chunked: boolean) =>
      new Promise<[string, string]>((resolve, reject) => {
        const socket = net.connect(Number(port), '127.0.0.1')
        const answers: string[] = []
        let got = ''
        socket.on('error', reject)
        const timer = setTimeout(() => {
          socket.destroy()
          reject(new Error(`no answer to a partial body (${authorization || 'no root key'})`))
        }, 3_000)
        socket.on('data', (data) => {
          got += data.toString()
          const end = got.indexOf('}', got.indexOf('\r\n\r\n'))
          if (end < 0) return
          answers.push(got.slice(0, end + 1))
          got = ''
          if (answers.length === 1) {
            // The rest of the body, then a second request on the same connection.
            socket.write(chunked ? `${'x'.repeat(59)}\r\n0\r\n\r\n` : 'x'.repeat(59))
            socket.write(`GET /livez HTTP/1.1\r\nhost: x\r\n\r\n`)
          } else {
            clearTimeout(timer)
            socket.destroy()
            resolve(answers as [string, string])
          }
        })
        const length = chunked ? 'transfer-encoding: chunked\r\n' : 'content-length: 60\r\n'
        const head = `POST ${PATH} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${length}`
        socket.write(`${head}${authorization ? `authorization: ${authorization}\r\n` : ''}\r\n`)
        socket.write(chunked ? '3c\r\n{' : '{')
      })
    // Missing (refused at once), unknown and cached, unknown and read from the store (refused later).
    for (const authorization of ['', rootKeys.unknown!, `Bearer kgroot_never_seen_${Date.now()}`]) {
      // Chunked: Fastify answers it (the fast path leaves it); with a Content-Length the fast path does.
      const [[fastify, fastifyNext], [fast, fastNext]] = [
        await exchange(authorization, true),
        await exchange(authorization, false),
      ]
      const status = (answer: string) => answer.slice(0, answer.indexOf('\r\n'))
      expect(status(fast), authorization).toBe(status(fastify))
      expect(status(fast)).toMatch(authorization ? / 401 / : / 400 /)
      expect(status(fastNext)).toBe(status(fastifyNext))
      expect(status(fastNext)).toBe('HTTP/1.1 200 OK')
    }
  })

  it('answers generated bodies exactly as the Fastify route does', async () => {
    const value = anyFieldValue
    const body = anyBodyWith({
      key: fc.oneof(fc.constantFrom(keys.valid!, keys.disabled!, keys.other!, 'sk_nope'), value),
      permissions: fc.oneof(fc.constantFrom('read', 'read OR', 'a AND b'), value),
      credits: value,
      ratelimits: value,
      tags: value,
      migrationId: value,
    })
    await fc.assert(
      fc.asyncProperty(body, fc.constantFrom(...Object.values(rootKeys)), async (text, authorization) => {
        const [fast, fastify] = await both(text, authorization)
        expect(fast).toStrictEqual(fastify)
      }),
      { seed: 20261128, numRuns: 200 },
    )
  })

  it("answers 503 in v2's shape when the store cannot be read, as Fastify does", async () => {
    await whileStoreIsDown(backend.store, async () => {
      const [fast, fastify] = await both(JSON.stringify({ key: 'sk_never_seen_before' }), rootKeys.bootstrap)
      expect(fast).toStrictEqual(fastify)
      expect(fast.status).toBe(503)
      expect(fast.body.error.status).toBe(503)
    })
  })

  it('counts its answers in the route metrics, under the v2 route', async () => {
    const counted = (status: number) => requestsCounted(verifier.app, PATH, status)
    const [ok, refused] = [await counted(200), await counted(401)]
    const reachedFastify = throughFastifyCount
    await answerOverHttp(url, PATH, JSON.stringify({ key: keys.valid }), headersWith(rootKeys.bootstrap))
    await answerOverHttp(url, PATH, JSON.stringify({ key: keys.valid }), headersWith(rootKeys.unknown))
    expect(throughFastifyCount).toBe(reachedFastify)
    expect(await counted(200)).toBe(ok + 1)
    expect(await counted(401)).toBe(refused + 1)
  })
})
