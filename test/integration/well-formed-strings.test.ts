import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY } from '../support/both-stores.js'
import { answerOverHttp, answerThroughFastify } from '../support/verify-paths.js'

/**
 * A string that is not well-formed Unicode (a lone surrogate, `"\ud800"`) is refused wherever a body is read, as a
 * value and as a property name, with a 400 in each wire's shape naming the field: stored, it would break every JSON
 * tool that reads it back. JSON.stringify writes a lone surrogate as its `\u` escape, as a client's JSON library does.
 */
const VALUE =
  'is not well-formed Unicode: it holds a lone surrogate (an escape from \\uD800 to \\uDFFF that is not half of a pair)'
const NAME = `has a property name that ${VALUE}`

let backend: Backend
let controlPlane: TestServer
let verifier: TestServer
let verifierUrl: string
let apiId: string
let key: string

const post = async (url: string, payload: object, headers: Record<string, string> = ADMIN_HEADERS) => {
  const response = await controlPlane.app.inject({ method: 'POST', url, headers, payload: JSON.stringify(payload) })
  return { status: response.statusCode, body: response.json(), raw: response.body }
}
const v1Refusal = (message: string) => ({ error: expect.objectContaining({ code: 'BAD_REQUEST', message }) })
const v2Refusal = (location: string, message: string) => ({
  meta: expect.any(Object),
  error: expect.objectContaining({
    status: 400,
    type: 'https://unkey.com/docs/errors/unkey/application/invalid_input',
    errors: [{ location, message }],
  }),
})

beforeAll(async () => {
  backend = await openBackend()
  controlPlane = await startTestControlPlane({ backend })
  verifier = await startTestVerifier({ backend })
  verifierUrl = await verifier.app.listen({ port: 0, host: '127.0.0.1' })
  apiId = (await post('/v1/apis.createApi', { name: 'unicode' })).body.apiId
  key = (await post('/v1/keys.createKey', { apiId })).body.key
})
afterAll(async () => {
  await verifier.close()
  await controlPlane.close()
  await backend.close()
})

describe('strings that are not well-formed Unicode', () => {
  it('v1 refuses one as a value or a property name, naming the field, and stores nothing', async () => {
    const value = await post('/v1/keys.createKey', { apiId, name: 'a\ud800b' })
    expect(value.status, value.raw).toBe(400)
    expect(value.body).toEqual(v1Refusal(`name: ${VALUE}`))
    const name = await post('/v1/keys.createKey', { apiId, meta: { note: 'ok', '\udc00': 1 } })
    expect(name.status, name.raw).toBe(400)
    expect(name.body).toEqual(v1Refusal(`meta: ${NAME}`))
    const listed = await controlPlane.app.inject({ url: `/v1/apis.listKeys?apiId=${apiId}`, headers: ADMIN_HEADERS })
    expect(listed.json().keys).toHaveLength(1)
  })

  it('v2 refuses one as a value or a property name, locating the field in its problem body', async () => {
    const value = await post('/v2/keys.createKey', { apiId, meta: { notes: ['fine', 'x\udfff'] } })
    expect(value.status, value.raw).toBe(400)
    expect(value.body).toEqual(v2Refusal('body.meta.notes.1', VALUE))
    expect(value.body.error.detail).toBe(`meta.notes.1: ${VALUE}`)
    const name = await post('/v2/apis.createApi', { name: 'n', '\ud800': true })
    expect(name.status, name.raw).toBe(400)
    expect(name.body).toEqual(v2Refusal('body', NAME))
  })

  it("the portal refuses one as a value or a property name, in v2's shape", async () => {
    const portal = await post('/v2/portal.createPortal', { slug: 'unicode-portal', name: 'Keys', apiIds: [apiId] })
    expect(portal.status, portal.raw).toBe(200)
    const session = await post('/v2/portal.createSession', {
      portal: 'unicode-portal',
      externalId: 'unicode_customer',
      scopes: ['keys:read', 'keys:create'],
    })
    const code = new URL(session.body.data.url as string).searchParams.get('code')!
    const exchanged = await controlPlane.app.inject({
      method: 'POST',
      url: '/v2/portal.exchangeCode',
      headers: JSON_ONLY,
      payload: { code },
    })
    const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!
    const customer = { ...JSON_ONLY, cookie }
    const value = await post('/v2/portal.createKey', { name: '\ud83d' }, customer)
    expect(value.status, value.raw).toBe(400)
    expect(value.body).toEqual(v2Refusal('body.name', VALUE))
    const name = await post('/v2/portal.createKey', { ['name\ud800']: 'x' }, customer)
    expect(name.status, name.raw).toBe(400)
    expect(name.body).toEqual(v2Refusal('body', NAME))
    expect((await post('/v2/portal.listKeys', {}, customer)).body.data).toEqual([])
  })

  it("the verifier refuses one in verifyKey's body on the fast path and through Fastify, v1 and v2 alike", async () => {
    const host = new URL(verifierUrl).host
    const v1Body = JSON.stringify({ key, apiId, tags: ['ok', '\udbff'] })
    for (const answer of [
      await answerOverHttp(verifierUrl, '/v1/keys.verifyKey', v1Body),
      await answerThroughFastify(verifier.app, host, '/v1/keys.verifyKey', v1Body),
    ]) {
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual(v1Refusal(`tags.1: ${VALUE}`))
    }
    const v2Headers = { 'content-type': 'application/json', authorization: `Bearer ${TEST_ROOT_KEY}` }
    const v2Body = JSON.stringify({ key, tags: ['ok'], '\udbff': 1 })
    for (const answer of [
      await answerOverHttp(verifierUrl, '/v2/keys.verifyKey', v2Body, v2Headers),
      await answerThroughFastify(verifier.app, host, '/v2/keys.verifyKey', v2Body, v2Headers),
    ]) {
      expect(answer.status).toBe(400)
      expect(answer.body).toEqual(v2Refusal('body', NAME))
    }
  })

  it('reads escapes as a client that keeps to ASCII writes them: any case, a pair as two escapes', async () => {
    // Python's json.dumps writes an emoji as \ud83d\ude00; other encoders write upper case, or a lone half.
    const sent = async (text: string) => {
      const response = await controlPlane.app.inject({
        method: 'POST',
        url: '/v1/keys.createKey',
        headers: ADMIN_HEADERS,
        payload: text,
      })
      return { status: response.statusCode, body: response.json(), raw: response.body }
    }
    const lone = await sent(`{"apiId":"${apiId}","name":"a\\uDBFFb"}`)
    expect(lone.status, lone.raw).toBe(400)
    expect(lone.body).toEqual(v1Refusal(`name: ${VALUE}`))
    const pairs = await sent(`{"apiId":"${apiId}","name":"\\uD83D\\uDE00 \\ud83d\\uDd11","meta":{"t":"\\\\uD800"}}`)
    expect(pairs.status, pairs.raw).toBe(200)
    const read = await controlPlane.app.inject({
      url: `/v1/keys.getKey?keyId=${pairs.body.keyId}`,
      headers: ADMIN_HEADERS,
    })
    expect(read.json()).toMatchObject({ name: '😀 🔑', meta: { t: '\\uD800' } })
  })

  it('reads a query string that encodes a surrogate in UTF-8 as the text sent, never as a lone surrogate', async () => {
    const answer = await controlPlane.app.inject({ url: '/v1/apis.listKeys?apiId=%ED%A0%80', headers: ADMIN_HEADERS })
    expect(answer.json().error).toMatchObject({ code: 'NOT_FOUND', message: 'api %ED%A0%80 not found' })
  })

  it('takes well-formed text: a surrogate pair, an escaped backslash before u, characters beyond the BMP', async () => {
    const created = await post('/v1/keys.createKey', {
      apiId,
      name: 'clé 🔑',
      meta: { '\ud83d\ude00': '\\ud800', text: String.raw`\ud800` },
    })
    expect(created.status, created.raw).toBe(200)
    const read = await controlPlane.app.inject({
      url: `/v1/keys.getKey?keyId=${created.body.keyId}`,
      headers: ADMIN_HEADERS,
    })
    expect(read.json()).toMatchObject({ name: 'clé 🔑', meta: { '😀': '\\ud800', text: '\\ud800' } })
  })
})
