import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { capturedLogger, startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

/**
 * No key or root key reaches a log, whatever the query parameter or header it came in: a real control plane
 * logging at trace level is sent keys everywhere a client might put them, and its log lines are searched.
 */
describe('secrets in requests never reach the log', () => {
  const captured = capturedLogger()
  let server: TestServer
  let key: string
  const auth = { authorization: `Bearer ${TEST_ROOT_KEY}` }

  beforeAll(async () => {
    server = await startTestControlPlane({ log: captured.log })
    const api = await server.app.inject({
      method: 'POST',
      url: '/v1/apis.createApi',
      headers: auth,
      payload: { name: 'log-secrets' },
    })
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.createKey',
      headers: auth,
      payload: { apiId: api.json<{ apiId: string }>().apiId },
    })
    key = created.json<{ key: string }>().key
  })
  afterAll(async () => {
    await server.close()
  })

  it('in any query parameter, as a bare query word, in headers and bodies', async () => {
    const paths = [
      `/v1/keys.verifyKey?key=${key}`,
      `/v1/apis.listKeys?apiId=api_x&apiKey=${key}`,
      `/v1/apis.listKeys?apiId=api_x&roles=${key}`,
      `/v1/keys.getKey?keyId=key_x&q=${encodeURIComponent(TEST_ROOT_KEY)}`,
      `/v1/apis.getApi?${key}`,
      // A key followed by `=`: a base64 bootstrap root key's padding, or a client that sends `?<key>=`.
      `/v1/apis.getApi?apiId=api_x&${key}=`,
      `/v1/apis.getApi?${TEST_ROOT_KEY}==`,
      `/v1/keys.nope?token=${key}`,
    ]
    for (const url of paths) {
      await server.app.inject({ method: 'GET', url, headers: { ...auth, 'x-api-key': key, 'x-custom': key } })
    }
    await server.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key } })
    await server.app.inject({ method: 'POST', url: '/v1/keys.whoami', headers: auth, payload: { key } })
    await server.app.inject({ method: 'POST', url: `/v1/keys.verifyKey?apiKey=${key}`, payload: '{"key": broken' })

    const text = captured.lines.join('')
    // The requests were logged (by path and parameter names), so the search below searched something.
    expect(text).toContain('/v1/apis.listKeys?apiId=api_x&apiKey=[redacted]')
    expect(text).toContain('/v1/apis.getApi?[redacted]')
    expect(text).not.toContain(key)
    expect(text).not.toContain(TEST_ROOT_KEY)
    expect(text).not.toContain(encodeURIComponent(TEST_ROOT_KEY))
  })

  it("in the customer portal's flow: its one-time code, its token, the keys it answers", async () => {
    const post = async (operation: string, payload: unknown, headers: Record<string, string> = auth) =>
      server.app.inject({
        method: 'POST',
        url: `/v2/${operation}`,
        headers: { 'content-type': 'application/json', ...headers },
        payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
      })
    const api = (await post('apis.createApi', { name: 'portal-log-secrets' })).json().data.apiId as string
    const portal = await post('portal.createPortal', { slug: 'log-secrets', name: 'x', apiIds: [api] })
    expect(portal.statusCode, portal.body).toBe(200)
    const minted = await post('portal.createSession', {
      portal: 'log-secrets',
      externalId: 'logged',
      scopes: ['keys:read', 'keys:create', 'keys:reroll'],
    })
    const url = new URL(minted.json().data.url as string)
    const code = url.searchParams.get('code')!
    // The page's address, as the customer's browser asks for it; a broken exchange; then the real one.
    await server.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` })
    await post('portal.exchangeCode', `{"code": "${code}`, {})
    const exchanged = await post('portal.exchangeCode', { code }, {})
    expect(exchanged.statusCode, exchanged.body).toBe(200)
    const token = exchanged.json().data.accessToken as string
    await post('portal.exchangeCode', { code }, {})
    const cookie = { cookie: `portal_session=${token}` }
    const created = (await post('portal.createKey', {}, cookie)).json().data as { keyId: string; key: string }
    const rolled = (await post('portal.rerollKey', { keyId: created.keyId, expiration: 0 }, cookie)).json().data
    await post('portal.listKeys', {}, cookie)
    await post('portal.listKeys', {}, { ...cookie, authorization: `Bearer ${token}` })
    await post('portal.signOut', {}, cookie)
    await post('portal.listKeys', {}, cookie)

    const text = captured.lines.join('')
    expect(text).toContain('/v2/portal.exchangeCode')
    for (const secret of [code, token, created.key, rolled.key as string]) expect(text).not.toContain(secret)
  })
})
