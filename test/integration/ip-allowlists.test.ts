import { createServer, request as httpRequest, type Server } from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { apiSettingsAddress } from '../../shared/api-settings.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { apiLeakPolicy } from '../../control-plane/leaks/api-leak-policy.js'
import { createReverseProxy, type ReverseProxy } from '../../verifier/proxy-server.js'
import {
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

/**
 * IP allow-lists of keys (createKey, updateKey) and apis (createApi, updateApi) through the control plane, and their
 * verdicts on a verifier of its own, on both stores: a request from outside a list is FORBIDDEN. inject() sets the
 * client's socket address (`remoteAddress`), which is the address that counts unless CLIENT_ADDRESS says otherwise.
 */
onBothStores('IP allow-lists', {}, (stack) => {
  const inject = async (
    server: TestServer,
    path: string,
    payload: object,
    options: { headers?: Record<string, string>; from?: string } = {},
  ) => {
    const response = await server.app.inject({
      method: 'POST',
      url: path,
      headers: options.headers ?? ADMIN_HEADERS,
      payload,
      ...(options.from ? { remoteAddress: options.from } : {}),
    })
    return { status: response.statusCode, body: response.json() }
  }
  const v1 = (operation: string, payload: object, headers?: Record<string, string>) =>
    inject(stack.controlPlane, `/v1/${operation}`, payload, headers ? { headers } : {})
  const v2 = (operation: string, payload: object, headers?: Record<string, string>) =>
    inject(stack.controlPlane, `/v2/${operation}`, payload, headers ? { headers } : {})
  /** verifyKey (v1) on the verifier, from `from`. */
  const verifyFrom = async (from: string, key: string, extra: object = {}) =>
    (await inject(stack.verifier, '/v1/keys.verifyKey', { key, ...extra }, { headers: JSON_ONLY, from })).body
  /** verifyKey (v2) on the verifier, from `from`. */
  const verifyV2From = async (from: string, key: string) =>
    (await inject(stack.verifier, '/v2/keys.verifyKey', { key }, { headers: ADMIN_HEADERS, from })).body.data
  const newApi = async (fields: object = {}) => {
    const created = await v1('apis.createApi', { name: 'allow-listed', ...fields })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return created.body.apiId as string
  }
  const newKey = async (apiId: string, fields: object = {}) => {
    const created = await v1('keys.createKey', { apiId, ...fields })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return created.body as { keyId: string; key: string }
  }
  const rootKeyWith = async (...permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { ...ADMIN_HEADERS, authorization: `Bearer ${key}` }
  }
  /** The verifier's verdict from `from`, once it reflects the change the test just made. */
  const eventually = (from: string, key: string, code: string) =>
    waitFor(async () => (await verifyFrom(from, key)).code === code, `${code} from ${from}`)

  let apiId: string
  beforeAll(async () => {
    apiId = await newApi()
  })

  it("a key's list: set (normalised) by createKey, shown by getKey and listKeys in both shapes, enforced", async () => {
    const { keyId, key } = await newKey(apiId, { ipWhitelist: ['10.1.2.3/8', '2001:DB8::/32', '::ffff:192.0.2.7'] })
    const normalised = ['10.0.0.0/8', '2001:db8::/32', '192.0.2.7/32']
    expect((await stack.getKey(keyId)).ipWhitelist).toEqual(normalised)
    expect((await v2('keys.getKey', { keyId })).body.data.ipAllowlist).toEqual(normalised)
    const listed = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/apis.listKeys?apiId=${apiId}`,
      headers: ADMIN_HEADERS,
    })
    expect(listed.json().keys.find((k: { id: string }) => k.id === keyId).ipWhitelist).toEqual(normalised)
    const listedV2 = await v2('apis.listKeys', { apiId })
    expect(listedV2.body.data.find((k: { keyId: string }) => k.keyId === keyId).ipAllowlist).toEqual(normalised)

    expect(await verifyFrom('127.0.0.1', key)).toMatchObject({ valid: false, code: 'FORBIDDEN', keyId })
    expect(await verifyFrom('10.200.0.1', key)).toMatchObject({ valid: true, code: 'VALID', keyId })
    expect(await verifyFrom('::ffff:10.200.0.1', key)).toMatchObject({ valid: true, code: 'VALID' })
    // IPv4-compatible (::/96, as Node shows a peer at ::a01:203): an IPv6 address, outside 10.0.0.0/8.
    expect(await verifyFrom('::10.200.0.1', key)).toMatchObject({ valid: false, code: 'FORBIDDEN' })
    expect(await verifyFrom('2001:db8:5::1', key)).toMatchObject({ valid: true, code: 'VALID' })
    expect(await verifyFrom('192.0.2.7', key)).toMatchObject({ valid: true })
    expect(await verifyFrom('192.0.2.8', key)).toMatchObject({ valid: false, code: 'FORBIDDEN' })
    // The same verdicts, memoised or not, alternating: the address is part of what a verdict is kept for.
    for (let i = 0; i < 3; i++) {
      expect((await verifyFrom('10.0.0.1', key)).code).toBe('VALID')
      expect((await verifyFrom('11.0.0.1', key)).code).toBe('FORBIDDEN')
    }
    expect(await verifyV2From('127.0.0.1', key)).toMatchObject({ valid: false, code: 'FORBIDDEN', keyId })
    expect(await verifyV2From('10.9.9.9', key)).toMatchObject({ valid: true, code: 'VALID', keyId })
    // The control plane's own verifyKey answers alike.
    const own = await inject(stack.controlPlane, '/v1/keys.verifyKey', { key }, { headers: JSON_ONLY })
    expect(own.body).toMatchObject({ valid: false, code: 'FORBIDDEN' })
  })

  it("a key's list: replaced and cleared by updateKey (v1 null, v2 []), on the verifier within the bound", async () => {
    const { keyId, key } = await newKey(apiId, { ipWhitelist: ['10.0.0.0/8'] })
    expect((await verifyFrom('192.0.2.1', key)).code).toBe('FORBIDDEN')
    expect((await v1('keys.updateKey', { keyId, ipWhitelist: ['192.0.2.0/24'] })).status).toBe(200)
    expect((await stack.getKey(keyId)).ipWhitelist).toEqual(['192.0.2.0/24'])
    await eventually('192.0.2.1', key, 'VALID')
    expect((await verifyFrom('10.0.0.1', key)).code).toBe('FORBIDDEN')
    // Left out: unchanged.
    expect((await v1('keys.updateKey', { keyId, name: 'renamed' })).status).toBe(200)
    expect((await stack.getKey(keyId)).ipWhitelist).toEqual(['192.0.2.0/24'])
    expect((await v1('keys.updateKey', { keyId, ipWhitelist: null })).status).toBe(200)
    expect((await stack.getKey(keyId)).ipWhitelist).toBeUndefined()
    await eventually('10.0.0.1', key, 'VALID')
    expect((await v2('keys.updateKey', { keyId, ipAllowlist: ['2001:db8::1'] })).status).toBe(200)
    expect((await v2('keys.getKey', { keyId })).body.data.ipAllowlist).toEqual(['2001:db8::1/128'])
    await eventually('10.0.0.1', key, 'FORBIDDEN')
    expect((await v2('keys.updateKey', { keyId, ipAllowlist: [] })).status).toBe(200)
    expect((await v2('keys.getKey', { keyId })).body.data.ipAllowlist).toBeUndefined()
    await eventually('10.0.0.1', key, 'VALID')
  })

  it('refuses a malformed entry (400 naming it, in each wire’s shape), too many entries and too long ones', async () => {
    const bad = await v1('keys.createKey', { apiId, ipWhitelist: ['10.0.0.1', 'ten.0.0.1'] })
    expect(bad.status).toBe(400)
    expect(bad.body.error).toMatchObject({ code: 'BAD_REQUEST' })
    expect(bad.body.error.message).toMatch(/^ipWhitelist\.1: "ten\.0\.0\.1" is not an IP address or CIDR range/)
    const badV2 = await v2('keys.createKey', { apiId, ipAllowlist: ['10.0.0.0/33'] })
    expect(badV2.status).toBe(400)
    expect(badV2.body.error.errors).toEqual([
      { location: 'body.ipAllowlist.0', message: expect.stringMatching(/"10\.0\.0\.0\/33" is not an IP address/) },
    ])
    const { keyId } = await newKey(apiId)
    const badUpdate = await v1('keys.updateKey', { keyId, ipWhitelist: ['127.1'] })
    expect(badUpdate.status).toBe(400)
    expect(badUpdate.body.error.message).toMatch(/^ipWhitelist\.0: "127\.1"/)
    expect((await v2('keys.updateKey', { keyId, ipAllowlist: ['fe80::1%eth0'] })).status).toBe(400)
    const many = Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`)
    expect((await v1('keys.createKey', { apiId, ipWhitelist: many })).status).toBe(400)
    expect((await v1('keys.createKey', { apiId, ipWhitelist: many.slice(0, 100) })).status).toBe(200)
    expect((await v2('apis.updateApi', { apiId, ipAllowlist: [`${'0:'.repeat(32)}1`] })).status).toBe(400)
    expect((await v1('apis.createApi', { name: 'bad list', ipWhitelist: ['x'] })).status).toBe(400)
    // Nothing was written for a refused call.
    expect((await stack.getKey(keyId)).ipWhitelist).toBeUndefined()
  })

  it("an api's list: set by createApi, changed by updateApi, on every key of it; both lists must allow", async () => {
    const listed = await newApi({ ipWhitelist: ['10.0.0.0/8'] })
    const plain = await newKey(listed)
    const pinned = await newKey(listed, { ipWhitelist: ['10.1.0.0/16'] })
    expect((await verifyFrom('127.0.0.1', plain.key)).code).toBe('FORBIDDEN')
    expect((await verifyFrom('10.2.0.1', plain.key)).code).toBe('VALID')
    // The key's list and the api's: both.
    expect((await verifyFrom('10.2.0.1', pinned.key)).code).toBe('FORBIDDEN')
    expect((await verifyFrom('10.1.0.1', pinned.key)).code).toBe('VALID')

    const changed = await v1('apis.updateApi', { apiId: listed, ipWhitelist: ['192.0.2.0/24'] })
    expect(changed.body).toEqual({
      apiId: listed,
      name: 'allow-listed',
      ipWhitelist: ['192.0.2.0/24'],
      leakPolicy: 'disable',
      billableOutcomes: ['VALID'],
    })
    await eventually('192.0.2.9', plain.key, 'VALID')
    expect((await verifyFrom('10.2.0.1', plain.key)).code).toBe('FORBIDDEN')
    // Nothing in both lists: refused from everywhere.
    expect((await verifyFrom('10.1.0.1', pinned.key)).code).toBe('FORBIDDEN')
    expect((await verifyFrom('192.0.2.9', pinned.key)).code).toBe('FORBIDDEN')

    const read = await v2('apis.getApi', { apiId: listed })
    expect(read.body.data).toEqual({ id: listed, name: 'allow-listed', ipAllowlist: ['192.0.2.0/24'] })
    // v1's getApi answers exactly Unkey's fields.
    const readV1 = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/apis.getApi?apiId=${listed}`,
      headers: ADMIN_HEADERS,
    })
    expect(Object.keys(readV1.json()).sort()).toEqual(['id', 'name', 'workspaceId'])

    const cleared = await v2('apis.updateApi', { apiId: listed, ipAllowlist: null, leakPolicy: 'delete' })
    expect(cleared.body.data).toEqual({
      id: listed,
      name: 'allow-listed',
      leakPolicy: 'delete',
      billableOutcomes: ['VALID'],
    })
    await eventually('127.0.0.1', plain.key, 'VALID')
    expect((await verifyFrom('10.1.0.1', pinned.key)).code).toBe('VALID')
    expect(await apiLeakPolicy(stack.controlPlane.backend, listed)).toBe('delete')
    expect(await apiLeakPolicy(stack.controlPlane.backend, apiId)).toBe('disable')
  })

  it('keeps the settings as an entity of their own, logged as any write, audited, and gone with the api', async () => {
    const listed = await newApi({ ipWhitelist: ['10.0.0.0/8'], leakPolicy: 'notify' })
    const address = apiSettingsAddress(listed)
    const stored = await stack.backend.store.entities.getEntity(address)
    expect(stored?.doc).toEqual({ ipAllowlist: ['10.0.0.0/8'], leakPolicy: 'notify' })
    expect((await v1('apis.updateApi', { apiId: listed, leakPolicy: 'delete' })).status).toBe(200)
    const updated = await stack.backend.store.entities.getEntity(address)
    expect(updated!.rev).toBeGreaterThan(stored!.rev)
    // Sending nothing to change writes nothing (v1 reads the settings so).
    const same = await v1('apis.updateApi', { apiId: listed })
    expect(same.body).toMatchObject({ ipWhitelist: ['10.0.0.0/8'], leakPolicy: 'delete' })
    expect((await stack.backend.store.entities.getEntity(address))!.rev).toBe(updated!.rev)
    const audit = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/audit.list?action=apis.updateApi&apiId=${listed}`,
      headers: ADMIN_HEADERS,
    })
    expect(audit.json().entries).toMatchObject([
      { action: 'apis.updateApi', before: { leakPolicy: 'notify' }, after: { leakPolicy: 'delete' } },
    ])
    expect((await v1('apis.deleteApi', { apiId: listed })).status).toBe(200)
    expect(await stack.backend.store.entities.getEntity(address)).toBeNull()
    expect((await v1('apis.updateApi', { apiId: listed, leakPolicy: 'notify' })).status).toBe(404)
    expect(await stack.backend.store.entities.getEntity(address)).toBeNull()
  })

  it('updateApi needs update_api on the api (403 before 400 and 404)', async () => {
    const listed = await newApi()
    const reader = await rootKeyWith(`api.${listed}.read_api`, `api.${listed}.update_key`)
    const elsewhere = await rootKeyWith(`api.${apiId}.update_api`)
    const updater = await rootKeyWith(`api.${listed}.update_api`)
    for (const headers of [reader, elsewhere]) {
      const refused = await v1('apis.updateApi', { apiId: listed, ipWhitelist: ['not an address'] }, headers)
      expect(refused.status).toBe(403)
      expect(refused.body.error.code).toBe('INSUFFICIENT_PERMISSIONS')
      expect((await v2('apis.updateApi', { apiId: listed, leakPolicy: 'notify' }, headers)).status).toBe(403)
    }
    expect((await v1('apis.updateApi', { apiId: listed, ipWhitelist: ['not an address'] }, updater)).status).toBe(400)
    expect((await v1('apis.updateApi', { apiId: listed, ipWhitelist: ['10.0.0.0/8'] }, updater)).status).toBe(200)
    expect((await v2('apis.updateApi', { apiId: listed, leakPolicy: 'notify' }, updater)).status).toBe(200)
    expect((await v1('apis.updateApi', { apiId: 'api_missing', leakPolicy: 'notify' })).status).toBe(404)
    expect((await v2('apis.updateApi', { apiId: 'api_missing' })).status).toBe(404)
    expect((await v2('apis.updateApi', { apiId: listed, leakPolicy: 'sometimes' })).status).toBe(400)
  })

  it("reads no request's address for a key that no list applies to, and keeps its verdict", async () => {
    const unlisted = await newApi()
    const plain = await newKey(unlisted)
    const pinned = await newKey(unlisted, { ipWhitelist: ['10.0.0.0/8'] })
    let reads = 0
    const client = {
      get socket() {
        reads++
        return { remoteAddress: '10.0.0.1' }
      },
      get headers() {
        reads++
        return {}
      },
    }
    const { verifier } = stack.verifier
    const first = await verifier.verify(plain.key, {}, client)
    expect(first).toMatchObject({ valid: true, code: 'VALID' })
    expect(await verifier.verify(plain.key, {}, client)).toBe(first)
    expect(reads).toBe(0)
    expect(await verifier.verify(pinned.key, {}, client)).toMatchObject({ valid: true, code: 'VALID' })
    expect(reads).toBeGreaterThan(0)
  })

  it('checks the address after EXPIRED and before INSUFFICIENT_PERMISSIONS, as Unkey orders it', async () => {
    const disabled = await newKey(apiId, { ipWhitelist: ['10.0.0.0/8'], enabled: false })
    expect((await verifyFrom('127.0.0.1', disabled.key)).code).toBe('DISABLED')
    const expiring = await newKey(apiId, { ipWhitelist: ['10.0.0.0/8'], expires: Date.now() + 60_000 })
    expect((await v1('keys.updateKey', { keyId: expiring.keyId, expires: Date.now() - 1 })).status).toBe(200)
    await eventually('127.0.0.1', expiring.key, 'EXPIRED')
    const other = await newApi()
    const pinned = await newKey(apiId, { ipWhitelist: ['10.0.0.0/8'], permissions: ['documents.read'] })
    expect((await verifyFrom('127.0.0.1', pinned.key, { apiId: other })).code).toBe('FORBIDDEN')
    const missing = { authorization: { permissions: 'documents.write' } }
    expect((await verifyFrom('127.0.0.1', pinned.key, missing)).code).toBe('FORBIDDEN')
    expect((await verifyFrom('10.0.0.1', pinned.key, missing)).code).toBe('INSUFFICIENT_PERMISSIONS')
    // Refused calls spend no credits.
    const credited = await newKey(apiId, { ipWhitelist: ['10.0.0.0/8'], remaining: 2 })
    expect((await verifyFrom('127.0.0.1', credited.key)).code).toBe('FORBIDDEN')
    expect(await verifyFrom('10.0.0.1', credited.key)).toMatchObject({ code: 'VALID', remaining: 1 })
  })
})

describe('which address counts on the control plane, forward-auth and the proxy', () => {
  let backend: Backend
  let forwarded: TestServer
  let socket: TestServer
  let verifier: TestServer
  let proxy: ReverseProxy
  let upstream: Server
  let proxyPort: number
  let apiId: string
  let key: string
  const clock = new ManualClock(Date.now())

  beforeAll(async () => {
    backend = await openBackend()
    forwarded = await startTestControlPlane({
      backend,
      clock,
      clientAddress: { mode: 'forwarded', trustedProxies: ['127.0.0.1/32'] },
      gateway: { anyApi: true },
    })
    socket = await startTestControlPlane({ backend, clock, gateway: { anyApi: true } })
    const post = async (operation: string, payload: object) =>
      (await forwarded.app.inject({ method: 'POST', url: `/v1/${operation}`, headers: ADMIN_HEADERS, payload })).json()
    apiId = (await post('apis.createApi', { name: 'proxied' })).apiId
    key = (await post('keys.createKey', { apiId, ipWhitelist: ['10.0.0.0/8'] })).key
    verifier = await startTestVerifier({ backend, clock })
    upstream = createServer((_req, res) => res.end('upstream'))
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve))
    const { port } = upstream.address() as { port: number }
    proxy = createReverseProxy({
      verifier: verifier.verifier,
      policy: { keyHeader: 'x-api-key', apiId, cost: 1 },
      log: pino({ level: 'silent' }),
      registry: new Registry(),
      options: { upstreamUrl: `http://127.0.0.1:${port}`, timeoutMs: 5_000, connections: 2, docsBaseUrl: '/docs' },
    })
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve))
    proxyPort = (proxy.server.address() as { port: number }).port
  })
  afterAll(async () => {
    await proxy?.close()
    await new Promise((resolve) => upstream?.close(resolve))
    await verifier?.close()
    await socket?.close()
    await forwarded?.close()
    await backend?.close()
  })

  const verify = async (server: TestServer, from: string, forwardedFor?: string) =>
    (
      await server.app.inject({
        method: 'POST',
        url: '/v1/keys.verifyKey',
        headers: { ...JSON_ONLY, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
        payload: { key },
        remoteAddress: from,
      })
    ).json()

  it("takes a trusted proxy's X-Forwarded-For, and nobody else's", async () => {
    expect((await verify(forwarded, '127.0.0.1')).code).toBe('FORBIDDEN')
    expect((await verify(forwarded, '127.0.0.1', '10.1.2.3')).code).toBe('VALID')
    expect((await verify(forwarded, '127.0.0.1', '10.1.2.3, 127.0.0.1')).code).toBe('VALID')
    // A client's own entry left of the one the proxy appended is not read.
    expect((await verify(forwarded, '127.0.0.1', '10.1.2.3, 192.0.2.1')).code).toBe('FORBIDDEN')
    expect((await verify(forwarded, '127.0.0.1', 'not-an-address')).code).toBe('FORBIDDEN')
    expect((await verify(forwarded, '192.0.2.1', '10.1.2.3')).code).toBe('FORBIDDEN')
    expect((await verify(forwarded, '10.9.9.9', '192.0.2.1')).code).toBe('VALID')
    // With the socket's address, the header is never read.
    expect((await verify(socket, '127.0.0.1', '10.1.2.3')).code).toBe('FORBIDDEN')
  })

  it('forward-auth answers 403 FORBIDDEN from outside the list, 200 from inside', async () => {
    const authorize = async (server: TestServer, from: string, forwardedFor?: string) => {
      const response = await server.app.inject({
        method: 'GET',
        url: '/v1/authorize',
        headers: { 'x-api-key': key, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
        remoteAddress: from,
      })
      return [response.statusCode, response.headers['x-keygate-code']]
    }
    expect(await authorize(forwarded, '127.0.0.1')).toEqual([403, 'FORBIDDEN'])
    expect(await authorize(forwarded, '127.0.0.1', '10.0.0.7')).toEqual([200, 'VALID'])
    expect(await authorize(socket, '10.0.0.7')).toEqual([200, 'VALID'])
    expect(await authorize(socket, '127.0.0.1', '10.0.0.7')).toEqual([403, 'FORBIDDEN'])
  })

  it('the proxy refuses a client outside the list (403 FORBIDDEN) and forwards one inside it', async () => {
    const send = (apiKey: string) =>
      new Promise<{ status: number; code: unknown; body: string }>((resolve, reject) => {
        const req = httpRequest({ port: proxyPort, host: '127.0.0.1', path: '/', headers: { 'x-api-key': apiKey } })
        req.on('response', (res) => {
          let body = ''
          res.on('data', (chunk) => (body += chunk))
          res.on('end', () => resolve({ status: res.statusCode!, code: res.headers['x-keygate-code'], body }))
        })
        req.on('error', reject)
        req.end()
      })
    const refused = await send(key)
    expect(refused).toMatchObject({ status: 403, code: 'FORBIDDEN' })
    expect(JSON.parse(refused.body).error.message).toMatch(/outside its IP allow-list/)
    const local = (
      await forwarded.app.inject({
        method: 'POST',
        url: '/v1/keys.createKey',
        headers: ADMIN_HEADERS,
        payload: { apiId, ipWhitelist: ['127.0.0.0/8', '::1'] },
      })
    ).json().key
    await waitFor(async () => (await send(local)).status === 200, 'the local key forwarded')
    expect(await send(local)).toMatchObject({ status: 200, body: 'upstream' })
  })
})
