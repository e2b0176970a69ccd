import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashKey } from '../../shared/keys/key-material.js'
import { startKeygate, runKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

type Json = Record<string, any>

/**
 * The seed's whole flow over HTTP against real processes: `keygate control-plane` and `keygate verifier`
 * on a Redis of their own, with a root key made by `keygate root-key create`.
 */
describe('end to end: control plane + verifier processes on Redis', () => {
  let redis: RedisServer
  let controlPlane: KeygateProcess
  let verifier: KeygateProcess
  let rootKey: string
  const secrets: string[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url])
    expect(created.code, created.stderr).toBe(0)
    rootKey = created.stdout.trim()
    secrets.push(rootKey)
    controlPlane = await startKeygate(['control-plane', '--redis', redis.url])
    verifier = await startKeygate(['verifier'], { REDIS_URL: redis.url })
  })
  afterAll(async () => {
    await verifier?.stop()
    await controlPlane?.stop()
    await redis?.stop()
  })

  async function call(
    base: string,
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${base}/v1/${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    })
    return { status: response.status, body: (await response.json()) as Json, headers: response.headers }
  }
  const admin = (method: 'GET' | 'POST', path: string, body?: unknown) =>
    call(controlPlane.url, method, path, body, { authorization: `Bearer ${rootKey}` })
  const verifyOnVerifier = (key: string) => call(verifier.url, 'POST', 'keys.verifyKey', { key })

  it('runs the seed flow: create → verify → disable → denied on the verifier → enable → valid', async () => {
    const api = await admin('POST', 'apis.createApi', { name: 'e2e' })
    expect(api.status).toBe(200)
    const created = await admin('POST', 'keys.createKey', {
      apiId: api.body.apiId,
      name: 'seed',
      meta: { team: 'core' },
    })
    expect(created.status).toBe(200)
    const { keyId, key } = created.body
    secrets.push(key)

    expect((await verifyOnVerifier(key)).body).toMatchObject({
      keyId,
      valid: true,
      code: 'VALID',
      enabled: true,
      meta: { team: 'core' },
    })
    expect((await call(controlPlane.url, 'POST', 'keys.verifyKey', { key })).body).toMatchObject({ keyId, valid: true })

    expect((await admin('POST', 'keys.updateKey', { keyId, enabled: false })).status).toBe(200)
    const denied = await waitFor(
      async () => {
        const response = await verifyOnVerifier(key)
        return response.body.valid === false ? response : undefined
      },
      'the verifier to deny the disabled key',
      2_000,
      1,
    )
    expect(denied.status).toBe(200)
    expect(denied.body).toMatchObject({ keyId, valid: false, code: 'DISABLED', enabled: false })

    expect((await admin('POST', 'keys.updateKey', { keyId, enabled: true })).status).toBe(200)
    await waitFor(
      async () => (await verifyOnVerifier(key)).body.valid === true,
      'the verifier to accept the re-enabled key',
      2_000,
      1,
    )

    const read = await admin('GET', `keys.getKey?keyId=${keyId}`)
    expect(read.body).toMatchObject({
      id: keyId,
      apiId: api.body.apiId,
      name: 'seed',
      enabled: true,
      meta: { team: 'core' },
    })
  })

  it('pages listKeys over 30 keys', async () => {
    const api = await admin('POST', 'apis.createApi', { name: 'paging' })
    const ids: string[] = []
    for (let i = 0; i < 30; i++) {
      const created = await admin('POST', 'keys.createKey', { apiId: api.body.apiId })
      ids.push(created.body.keyId)
      secrets.push(created.body.key)
    }
    const listed: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const page = await admin(
        'GET',
        `apis.listKeys?apiId=${api.body.apiId}&limit=7${cursor ? `&cursor=${cursor}` : ''}`,
      )
      expect(page.status).toBe(200)
      expect(page.body.total).toBe(30)
      listed.push(...page.body.keys.map((k: Json) => k.id))
      cursor = page.body.cursor
      pages++
    } while (cursor && pages < 20)
    expect(pages).toBe(5)
    expect(listed).toEqual(ids.sort())
  })

  it('answers bad input, missing and wrong root keys, and unknown keys as the contract says', async () => {
    const badJson = await call(controlPlane.url, 'POST', 'keys.createKey', '{"apiId":', {
      authorization: `Bearer ${rootKey}`,
    })
    expect(badJson).toMatchObject({ status: 400, body: { error: { code: 'BAD_REQUEST' } } })
    const wrongType = await admin('POST', 'apis.createApi', { name: 7 })
    expect(wrongType).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_REQUEST', message: 'name: must be a string' } },
    })
    const noRootKey = await call(controlPlane.url, 'POST', 'apis.createApi', { name: 'x' })
    expect(noRootKey.status).toBe(403)
    expect(noRootKey.headers.get('www-authenticate')).toBe('Bearer')
    const wrongRootKey = await call(
      controlPlane.url,
      'POST',
      'apis.createApi',
      { name: 'x' },
      { authorization: 'Bearer not-a-root-key-at-all' },
    )
    expect(wrongRootKey).toMatchObject({ status: 403, body: { error: { code: 'UNAUTHORIZED' } } })
    const unknown = await verifyOnVerifier('sk_this_key_was_never_issued')
    expect(unknown).toMatchObject({ status: 200, body: { valid: false, code: 'NOT_FOUND' } })
    expect(Object.keys(unknown.body).sort()).toEqual(['code', 'requestId', 'valid'])
    const badVerify = await call(verifier.url, 'POST', 'keys.verifyKey', { key: ['x'] })
    expect(badVerify).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_REQUEST', message: 'key: must be a string' } },
    })
    expect((await call(verifier.url, 'GET', 'keys.verifyKey')).status).toBe(405)
    // A client that puts a key in the URL gets a 405 — and the key must not reach a log (scanned below).
    expect((await call(controlPlane.url, 'GET', `keys.verifyKey?key=${secrets[1]}`)).status).toBe(405)
  })

  it('serves health and metrics on both processes', async () => {
    for (const base of [controlPlane.url, verifier.url]) {
      expect((await fetch(`${base}/livez`)).status).toBe(200)
      expect((await fetch(`${base}/readyz`)).status).toBe(200)
      const metrics = await (await fetch(`${base}/metrics`)).text()
      expect(metrics).toContain('keygate_http_requests_total')
    }
    expect(await (await fetch(`${verifier.url}/metrics`)).text()).toMatch(
      /keygate_verify_verdicts_total\{code="DISABLED",service="verifier"\} [1-9]/,
    )
  })

  it('keeps secrets out of Redis, logs and metrics (runs last)', async () => {
    expect(secrets.length).toBeGreaterThan(30)
    const dump: string[] = []
    for (const name of await redis.admin.keys('*')) {
      const type = await redis.admin.type(name)
      dump.push(name)
      if (type === 'string') dump.push(String(await redis.admin.get(name)))
      else if (type === 'hash') dump.push(JSON.stringify(await redis.admin.hgetall(name)))
      else if (type === 'zset') dump.push(JSON.stringify(await redis.admin.zrange(name, '0', '-1')))
      else if (type === 'stream') dump.push(JSON.stringify(await redis.admin.xrange(name, '-', '+')))
    }
    const metrics = (
      await Promise.all([controlPlane.url, verifier.url].map(async (base) => (await fetch(`${base}/metrics`)).text()))
    ).join('\n')
    const logs = controlPlane.output() + verifier.output()
    expect(logs.length).toBeGreaterThan(1_000)
    const haystack = [dump.join('\n'), metrics, logs]
    for (const secret of secrets) {
      for (const text of haystack) expect(text.includes(secret), `a secret leaked`).toBe(false)
    }
    // The hashes are what Redis holds.
    expect(dump.join('\n')).toContain(hashKey(secrets[1]!))
  })
})
