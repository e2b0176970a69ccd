import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import { capturedLogger, openBackend, startTestVerifier, type Backend, type TestServer } from '../support/apps.js'
import { EVERYTHING, grantsOn } from '../support/rbac.js'

describe('forward-auth: /v1/authorize', () => {
  let backend: Backend
  /** Started with --any-api: keys of every api pass unless the gateway names one. */
  let plain: TestServer
  let strict: TestServer
  /** Neither --api-id nor --any-api: the gateway must name the api. */
  let unbound: TestServer
  const unboundLog = capturedLogger()
  let apiId: string
  let otherApiId: string
  let valid: { key: string; keyId: string }
  let disabled: { key: string; keyId: string }

  async function issue(api: string, fields: { enabled?: boolean; ownerId?: string } = {}) {
    const { key, hash, start } = generateKey('sk')
    const keyId = newId('key')
    await backend.store.keys.createKey({
      id: keyId,
      hash,
      start,
      apiId: api,
      enabled: fields.enabled ?? true,
      ownerId: fields.ownerId,
      createdAt: Date.now(),
    })
    return { key, keyId }
  }

  beforeAll(async () => {
    backend = await openBackend()
    apiId = newId('api')
    otherApiId = newId('api')
    for (const id of [apiId, otherApiId]) await backend.store.keys.createApi({ id, name: 'gw', createdAt: Date.now() })
    valid = await issue(apiId, { ownerId: 'acme' })
    disabled = await issue(apiId, { enabled: false })
    plain = await startTestVerifier({ backend, gateway: { anyApi: true } })
    unbound = await startTestVerifier({ backend, log: unboundLog.log })
    strict = await startTestVerifier({
      backend,
      gateway: { keyHeader: 'x-custom-key', apiId, permissions: ['documents.read'] },
    })
  })
  afterAll(async () => {
    await plain.close()
    await strict.close()
    await unbound.close()
    await backend.close()
  })

  const authorize = (server: TestServer, headers: Record<string, string>, method = 'GET', payload?: string) =>
    server.app.inject({ method: method as 'GET', url: '/v1/authorize', headers, payload })

  it('answers 200 with the key id and owner for a valid key, from X-API-Key or Authorization: Bearer, with no body', async () => {
    for (const headers of [{ 'x-api-key': valid.key }, { authorization: `Bearer ${valid.key}` }] as Record<
      string,
      string
    >[]) {
      const response = await authorize(plain, headers)
      expect(response.statusCode).toBe(200)
      expect(response.headers).toMatchObject({
        'x-keygate-key-id': valid.keyId,
        'x-keygate-owner-id': 'acme',
        'x-keygate-code': 'VALID',
      })
      expect(response.body).toBe('')
    }
  })

  it('answers under /v1/authorize/<original path> too, as Envoy ext_authz calls it', async () => {
    const response = await plain.app.inject({
      method: 'GET',
      url: '/v1/authorize/orders/17?page=2',
      headers: { 'x-api-key': valid.key },
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['x-keygate-key-id']).toBe(valid.keyId)
    expect((await plain.app.inject({ method: 'GET', url: '/v1/authorize/orders/17' })).statusCode).toBe(401)
  })

  it('answers 401 with WWW-Authenticate for no key, an unknown key and a disabled key', async () => {
    const cases: [Record<string, string>, string][] = [
      [{}, 'MISSING_KEY'],
      [{ authorization: 'Basic dXNlcjpwYXNz' }, 'MISSING_KEY'],
      [{ 'x-api-key': 'sk_never_issued_000000' }, 'NOT_FOUND'],
      [{ 'x-api-key': disabled.key }, 'DISABLED'],
    ]
    for (const [headers, code] of cases) {
      const response = await authorize(plain, headers)
      expect(response.statusCode, code).toBe(401)
      expect(response.headers['x-keygate-code']).toBe(code)
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="keygate"/)
    }
  })

  it('takes any method and any body without reading it', async () => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'PROPFIND', 'TRACE', 'MKCOL']) {
      const response = await authorize(
        plain,
        { 'x-api-key': valid.key, 'content-type': 'text/plain' },
        method,
        method === 'HEAD' ? undefined : '{not json'.repeat(10_000),
      )
      expect(response.statusCode, method).toBe(200)
    }
    const json = await authorize(
      plain,
      { 'x-api-key': valid.key, 'content-type': 'application/json' },
      'POST',
      '{"broken":',
    )
    expect(json.statusCode).toBe(200)
  })

  it('applies the configured api id, permissions and key header, each overridable by the gateway’s headers', async () => {
    const needsPermission = await authorize(strict, { 'x-custom-key': valid.key })
    expect(needsPermission.statusCode).toBe(403)
    expect(needsPermission.headers['x-keygate-code']).toBe('INSUFFICIENT_PERMISSIONS')
    const reader = await issue(apiId)
    const record = await backend.store.keys.getKeyById(reader.keyId)
    const permissionIds = (slugs: string[]) => grantsOn(backend).permissionIdsOf(slugs, EVERYTHING, true)
    await backend.store.keys.updateKey(
      reader.keyId,
      { permissionIds: await permissionIds(['documents.read']) },
      record!.rev,
      Date.now(),
    )
    expect((await authorize(strict, { 'x-custom-key': reader.key })).statusCode).toBe(200)
    // Comma-separated gateway permissions must all be held.
    expect(
      (
        await authorize(strict, {
          'x-custom-key': reader.key,
          'x-keygate-permissions': 'documents.read, documents.write',
        })
      ).statusCode,
    ).toBe(403)
    // A blank or empty-list override is no override: the configured permission still applies.
    for (const blank of ['', ' ', ',', ' , ']) {
      expect(
        (await authorize(strict, { 'x-custom-key': valid.key, 'x-keygate-permissions': blank })).statusCode,
        JSON.stringify(blank),
      ).toBe(403)
    }
    const granted = await issue(apiId)
    const grantedRecord = await backend.store.keys.getKeyById(granted.keyId)
    await backend.store.keys.updateKey(
      granted.keyId,
      { permissionIds: await permissionIds(['documents.read', 'billing.read']) },
      grantedRecord!.rev,
      Date.now(),
    )
    expect(
      (await authorize(strict, { 'x-custom-key': granted.key, 'x-keygate-permissions': 'billing.read' })).statusCode,
    ).toBe(200)
    const otherApi = await authorize(strict, { 'x-custom-key': granted.key, 'x-keygate-api-id': otherApiId })
    expect(otherApi.statusCode).toBe(403)
    expect(otherApi.headers['x-keygate-code']).toBe('FORBIDDEN')
    // The configured header replaces X-API-Key; Bearer still works.
    expect((await authorize(strict, { 'x-api-key': granted.key })).statusCode).toBe(401)
    expect((await authorize(strict, { authorization: `Bearer ${granted.key}` })).statusCode).toBe(200)
  })

  it('refuses, without an api from the gateway or its flags, every request (403 API_ID_REQUIRED, saying what to set), and says so in its log once', async () => {
    for (const headers of [
      { 'x-api-key': valid.key },
      { 'x-api-key': valid.key, 'x-keygate-api-id': ' ' },
      {},
    ] as Record<string, string>[]) {
      const response = await authorize(unbound, headers)
      expect(response.statusCode, JSON.stringify(headers)).toBe(403)
      expect(response.headers['x-keygate-code']).toBe('API_ID_REQUIRED')
      expect(response.headers['x-keygate-key-id']).toBeUndefined()
      expect(response.json().error).toMatchObject({
        code: 'API_ID_REQUIRED',
        message: expect.stringMatching(/X-Keygate-Api-Id[\s\S]*--api-id[\s\S]*--any-api/),
        requestId: response.headers['x-request-id'],
      })
    }
    const warnings = unboundLog.lines.filter((line) => line.includes('/v1/authorize refused a request'))
    expect(warnings).toHaveLength(1)
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40 })
    // The gateway naming the api is all it takes.
    const named = await authorize(unbound, { 'x-api-key': valid.key, 'x-keygate-api-id': apiId })
    expect(named.statusCode).toBe(200)
    expect(named.headers['x-keygate-key-id']).toBe(valid.keyId)
    const other = await authorize(unbound, { 'x-api-key': valid.key, 'x-keygate-api-id': otherApiId })
    expect(other.statusCode).toBe(403)
    expect(other.headers['x-keygate-code']).toBe('FORBIDDEN')
  })

  it('says at start-up how it finds the api: from the gateway alone, or (--any-api, a warning) any api', async () => {
    expect(unboundLog.lines.join('')).toMatch(/takes the api from X-Keygate-Api-Id/)
    const anyApi = capturedLogger()
    await (await startTestVerifier({ backend, log: anyApi.log, gateway: { anyApi: true } })).close()
    const line = anyApi.lines.find((l) => l.includes('AUTHORIZE_ANY_API'))
    expect(JSON.parse(line!)).toMatchObject({ level: 40 })
  })

  it('answers without waiting for a body that never ends', async () => {
    await plain.app.listen({ port: 0, host: '127.0.0.1' })
    const address = plain.app.server.address()
    const port = typeof address === 'object' && address ? address.port : 0
    const { request } = await import('node:http')
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          port,
          host: '127.0.0.1',
          path: '/v1/authorize',
          method: 'POST',
          headers: { 'x-api-key': valid.key, 'transfer-encoding': 'chunked' },
        },
        (res) => {
          resolve(res.statusCode ?? 0)
          req.destroy()
        },
      )
      req.on('error', reject)
      req.write('a chunk, and then nothing more for ever')
      setTimeout(() => reject(new Error('no answer within 2 s')), 2_000).unref()
    })
    expect(status).toBe(200)
  })

  it('percent-encodes an owner id that is not a plain header value, rather than failing', async () => {
    for (const ownerId of ['用户-42', 'a\nb', 'Zoë', '50%']) {
      const key = await issue(apiId, { ownerId })
      const response = await authorize(plain, { 'x-api-key': key.key })
      expect(response.statusCode, ownerId).toBe(200)
      expect(decodeURIComponent(String(response.headers['x-keygate-owner-id']))).toBe(ownerId)
    }
  })

  it('denies a key as soon as it is disabled', async () => {
    const key = await issue(apiId)
    expect((await authorize(plain, { 'x-api-key': key.key })).statusCode).toBe(200)
    const record = await backend.store.keys.getKeyById(key.keyId)
    await backend.store.keys.updateKey(key.keyId, { enabled: false }, record!.rev, Date.now())
    expect((await authorize(plain, { 'x-api-key': key.key })).statusCode).toBe(401)
  })
})
