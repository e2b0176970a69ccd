import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

type Json = Record<string, any>

/** The control plane's HTTP contract (docs/api.md), run on the memory store and on Redis. */
export function controlPlaneSuite(name: string, redisUrl: () => string | undefined): void {
  describe(`control plane over ${name}`, () => {
    let server: TestServer
    const auth = { authorization: `Bearer ${TEST_ROOT_KEY}` }

    beforeAll(async () => {
      server = await startTestControlPlane({ redisUrl: redisUrl() })
    })
    afterAll(async () => {
      await server.close()
    })

    async function post(path: string, body: unknown, headers: Record<string, string> = auth) {
      const response = await server.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { 'content-type': 'application/json', ...headers },
        payload: typeof body === 'string' ? body : JSON.stringify(body),
      })
      return { status: response.statusCode, body: response.json<Json>(), headers: response.headers }
    }
    async function get(path: string, headers: Record<string, string> = auth) {
      const response = await server.app.inject({ method: 'GET', url: `/v1/${path}`, headers })
      return { status: response.statusCode, body: response.json<Json>(), headers: response.headers }
    }
    async function createApi(): Promise<string> {
      const { status, body } = await post('apis.createApi', { name: 'suite' })
      expect(status).toBe(200)
      return body.apiId
    }
    async function createKey(apiId: string, fields: Json = {}): Promise<{ keyId: string; key: string }> {
      const { status, body } = await post('keys.createKey', { apiId, ...fields })
      expect(status, JSON.stringify(body)).toBe(200)
      return body as { keyId: string; key: string }
    }
    const verify = (body: Json) => post('keys.verifyKey', body, {})

    describe('the seed flow', () => {
      it('creates an api and reads it back', async () => {
        const { body } = await post('apis.createApi', { name: 'payments' })
        expect(body).toEqual({ apiId: expect.stringMatching(/^api_[1-9A-HJ-NP-Za-km-z]{22}$/), name: 'payments' })
        const read = await get(`apis.getApi?apiId=${body.apiId}`)
        expect(read).toMatchObject({
          status: 200,
          body: { id: body.apiId, name: 'payments', workspaceId: 'ws_keygate' },
        })
      })

      it('creates a key, verifies it, disables it (valid:false, enabled:false), re-enables it', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId, {
          name: 'checkout',
          prefix: 'sk',
          meta: { plan: 'pro' },
          externalId: 'user_1',
          environment: 'live',
        })
        expect(keyId).toMatch(/^key_/)
        expect(key).toMatch(/^sk_[1-9A-HJ-NP-Za-km-z]{20,24}_[1-9A-HJ-NP-Za-km-z]{6}$/)

        const valid = await verify({ key })
        expect(valid.status).toBe(200)
        expect(valid.body).toEqual({
          keyId,
          valid: true,
          code: 'VALID',
          name: 'checkout',
          ownerId: 'user_1',
          meta: { plan: 'pro' },
          enabled: true,
          environment: 'live',
          // createKey made the identity of its externalId, as Unkey's does.
          identity: { id: expect.stringMatching(/^id_/), externalId: 'user_1', meta: {} },
          requestId: valid.headers['x-request-id'],
        })

        expect(await post('keys.updateKey', { keyId, enabled: false })).toMatchObject({ status: 200, body: {} })
        const disabled = await verify({ key })
        expect(disabled.status).toBe(200)
        expect(disabled.body).toMatchObject({ keyId, valid: false, code: 'DISABLED', enabled: false })

        await post('keys.updateKey', { keyId, enabled: true })
        expect((await verify({ key })).body).toMatchObject({ keyId, valid: true, code: 'VALID', enabled: true })
      })

      it('returns the key record by id, without its hash, with start = prefix plus 4 characters', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId, {
          name: 'n',
          prefix: 'pk',
          byteLength: 32,
          meta: { tier: 1 },
          ownerId: 'o',
          enabled: false,
        })
        const { status, body } = await get(`keys.getKey?keyId=${keyId}`)
        expect(status).toBe(200)
        expect(body).toEqual({
          id: keyId,
          start: key.slice(0, 7),
          apiId,
          workspaceId: 'ws_keygate',
          name: 'n',
          ownerId: 'o',
          meta: { tier: 1 },
          createdAt: expect.any(Number),
          enabled: false,
          identity: { id: expect.stringMatching(/^id_/), externalId: 'o' },
        })
        expect(JSON.stringify(body)).not.toContain(hashKey(key))
        expect(JSON.stringify(body)).not.toContain(key)
      })

      it('updates with omitted = unchanged and null = cleared', async () => {
        const apiId = await createApi()
        const { keyId } = await createKey(apiId, { name: 'before', meta: { a: 1 }, externalId: 'x' })
        await post('keys.updateKey', { keyId, name: null, meta: { b: 2 } })
        const { body } = await get(`keys.getKey?keyId=${keyId}`)
        expect(body).toMatchObject({ meta: { b: 2 }, ownerId: 'x', updatedAt: expect.any(Number) })
        expect(body).not.toHaveProperty('name')
        await post('keys.updateKey', { keyId, externalId: null, meta: null })
        const cleared = (await get(`keys.getKey?keyId=${keyId}`)).body
        expect(cleared).not.toHaveProperty('ownerId')
        expect(cleared).not.toHaveProperty('meta')
      })

      it('answers NOT_FOUND for an unknown key with nothing but the verdict', async () => {
        const { status, body, headers } = await verify({ key: 'sk_doesnotexist000000000' })
        expect(status).toBe(200)
        expect(body).toEqual({ valid: false, code: 'NOT_FOUND', requestId: headers['x-request-id'] })
      })

      it('answers FORBIDDEN when apiId is not the key’s', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId)
        expect((await verify({ key, apiId })).body).toMatchObject({ valid: true, code: 'VALID' })
        expect((await verify({ key, apiId: 'api_other' })).body).toMatchObject({
          keyId,
          valid: false,
          code: 'FORBIDDEN',
          enabled: true,
        })
      })

      it('creates a disabled key that does not verify until enabled', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId, { enabled: false })
        expect((await verify({ key })).body).toMatchObject({ code: 'DISABLED', enabled: false })
        await post('keys.updateKey', { keyId, enabled: true })
        expect((await verify({ key })).body).toMatchObject({ code: 'VALID' })
      })

      it('deletes a key: it stops verifying and is gone', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId)
        expect((await verify({ key })).body.valid).toBe(true)
        expect(await post('keys.deleteKey', { keyId })).toMatchObject({ status: 200, body: {} })
        expect((await verify({ key })).body).toMatchObject({ valid: false, code: 'NOT_FOUND' })
        expect((await get(`keys.getKey?keyId=${keyId}`)).status).toBe(404)
        expect((await post('keys.deleteKey', { keyId })).status).toBe(404)
      })

      it('deletes an api: every key of it stops verifying, the api is gone', async () => {
        const apiId = await createApi()
        const keys = await Promise.all(Array.from({ length: 5 }, () => createKey(apiId)))
        for (const { key } of keys) expect((await verify({ key })).body.valid).toBe(true)
        expect(await post('apis.deleteApi', { apiId })).toMatchObject({ status: 200, body: {} })
        for (const { key } of keys) expect((await verify({ key })).body.code).toBe('NOT_FOUND')
        expect((await get(`apis.getApi?apiId=${apiId}`)).status).toBe(404)
        expect((await get(`apis.listKeys?apiId=${apiId}`)).status).toBe(404)
        expect((await post('keys.createKey', { apiId })).status).toBe(404)
        expect((await post('apis.deleteApi', { apiId })).status).toBe(404)
      })

      it('pages listKeys over 27 keys by cursor, sorted by id, cursor only on full pages', async () => {
        const apiId = await createApi()
        const created: string[] = []
        for (let i = 0; i < 27; i++)
          created.push((await createKey(apiId, { externalId: i < 4 ? 'acme' : undefined })).keyId)
        const pages: Json[] = []
        let cursor: string | undefined
        do {
          const { status, body } = await get(
            `apis.listKeys?apiId=${apiId}&limit=10${cursor ? `&cursor=${cursor}` : ''}`,
          )
          expect(status).toBe(200)
          pages.push(body)
          cursor = body.cursor
        } while (cursor && pages.length < 10)
        expect(pages.map((p) => p.keys.length)).toEqual([10, 10, 7])
        expect(pages.map((p) => p.total)).toEqual([27, 27, 27])
        expect(pages[0]!.cursor).toBe(pages[0]!.keys[9].id)
        expect(pages[2]).not.toHaveProperty('cursor')
        const listed = pages.flatMap((p) => p.keys.map((k: Json) => k.id))
        expect(listed).toEqual([...created].sort())
        for (const key of pages.flatMap((p) => p.keys)) {
          expect(key).not.toHaveProperty('hash')
          expect(key).not.toHaveProperty('rev')
        }

        const acme = (await get(`apis.listKeys?apiId=${apiId}&externalId=acme`)).body
        // The api's keys, not the owner's: Unkey's listKeys counts so.
        expect(acme.total).toBe(27)
        expect(acme.keys.map((k: Json) => k.ownerId)).toEqual(['acme', 'acme', 'acme', 'acme'])
        expect((await get(`apis.listKeys?apiId=${apiId}&limit=101`)).status).toBe(400)
        expect((await get(`apis.listKeys?apiId=${apiId}&limit=0`)).status).toBe(400)
      })

      it('answers liveness without a root key', async () => {
        expect(await get('liveness', {})).toMatchObject({
          status: 200,
          body: { status: 'ok', services: { store: redisUrl() ? 'redis' : 'memory' } },
        })
      })
    })

    describe('bad input: a clear 4xx in the contract shape, nothing written', () => {
      const errorShape = (code: string) => ({
        error: {
          code,
          message: expect.any(String),
          // inject() sends `Host: localhost:80`: the link is absolute, on the server that answered.
          docs: `http://localhost:80/docs/errors/${code}`,
          requestId: expect.stringMatching(/^req_/),
        },
      })

      it('rejects a body that is not JSON', async () => {
        const response = await server.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: { 'content-type': 'application/json' },
          payload: '{"key":',
        })
        expect(response.statusCode).toBe(400)
        expect(response.json()).toEqual(errorShape('BAD_REQUEST'))
        expect(response.json().error.message).toBe(
          'body: is not valid JSON: unexpected end of body at position 7 (expected a value: an object, array, string, number, true, false or null)',
        )
      })

      it('names the field of a wrong type, a missing field and an unknown field', async () => {
        expect((await verify({ key: 42 })).body.error.message).toBe('key: must be a string')
        const apiId = await createApi()
        const { keyId } = await createKey(apiId)
        const wrong = await post('keys.updateKey', { keyId, enabled: 'false' })
        expect(wrong).toMatchObject({ status: 400, body: errorShape('BAD_REQUEST') })
        expect(wrong.body.error.message).toBe('enabled: must be a boolean')
        expect((await post('keys.createKey', { name: 'x' })).body.error.message).toBe('apiId: is required')
        expect((await post('keys.createKey', { apiId, nmae: 'typo' })).body.error.message).toBe(
          'nmae: is not a known field (did you mean name?)',
        )
        // The misspelt field is named even though the field it hides (apiId) is missing too.
        expect((await post('keys.createKey', { apiid: apiId })).body.error.message).toBe(
          'apiid: is not a known field (did you mean apiId?); apiId: is required',
        )
        expect((await verify({ key: '' })).body.error.message).toBe('key: must not be empty')
        expect((await post('keys.updateRemaining', { keyId, op: 'add', value: 1 })).body.error.message).toBe(
          'op: must be one of "increment", "decrement", "set"',
        )
        expect((await post('keys.updateKey', { keyId, enabled: null })).status).toBe(400)
        expect((await get(`keys.getKey?keyId=${keyId}`)).body.enabled).toBe(true)
      })

      it('refuses a verifyKey rate limit by a name the key and its identity do not have, once the key is found', async () => {
        const apiId = await createApi()
        const { keyId, key } = await createKey(apiId)
        const { status, body } = await verify({ key, ratelimits: [{ name: 'n' }] })
        expect(status).toBe(400)
        expect(body.error.message).toBe(
          `ratelimits.0: the key ${keyId} has no identity and no limit named "n"; give limit and duration to define one for this call`,
        )
        // Unkey's order: an unknown key is NOT_FOUND before its limits are looked at.
        expect(await verify({ key: 'x', ratelimits: [{ name: 'n' }] })).toMatchObject({
          status: 200,
          body: { valid: false, code: 'NOT_FOUND' },
        })
      })

      it('refuses recoverable keys and decrypt with 412', async () => {
        const apiId = await createApi()
        expect(await post('keys.createKey', { apiId, recoverable: true })).toMatchObject({
          status: 412,
          body: errorShape('PRECONDITION_FAILED'),
        })
        const { keyId } = await createKey(apiId, { recoverable: false })
        expect((await get(`keys.getKey?keyId=${keyId}&decrypt=true`)).status).toBe(412)
        expect((await get(`apis.listKeys?apiId=${apiId}&decrypt=true`)).status).toBe(412)
      })

      it("reports a new key's first broken rule, in one order: v1's alias, allow-list, credits, meta, limits, 412, expiry", async () => {
        const apiId = await createApi()
        let deep: Json = {}
        for (let i = 0; i < 20; i++) deep = { d: deep }
        const limit = { name: 'tokens', limit: 1, duration: 1000 }
        // Each rule broken alone, and createKey's answer to it: of two broken in one body, the earlier answers.
        const rules: [Json, number, string][] = [
          [{ ownerId: 'a', externalId: 'b' }, 400, 'externalId: differs from its alias ownerId'],
          [
            { ipWhitelist: ['nope'] },
            400,
            'ipWhitelist.0: "nope" is not an IP address or CIDR range (such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)',
          ],
          [
            { refill: { interval: 'daily', amount: 1 } },
            400,
            'refill: needs remaining (a key without credits has nothing to refill)',
          ],
          [
            { remaining: 5, refill: { interval: 'daily', amount: 1, refillDay: 3 } },
            400,
            'refill.refillDay: only for a monthly refill',
          ],
          [
            { creditsLowThreshold: 2 },
            400,
            'creditsLowThreshold: only for a key with credits (remaining): a key without them has no balance to watch',
          ],
          [{ meta: deep }, 400, 'meta: nests deeper than 16 levels'],
          [{ ratelimits: [limit, limit] }, 409, 'Ratelimit with name "tokens" is already defined in the request'],
          [
            { ratelimit: { limit: 1, duration: 1000 }, ratelimits: [{ ...limit, name: 'default' }] },
            400,
            `ratelimits: "default" is the name of the key's ratelimit; give one or the other`,
          ],
          [{ recoverable: true }, 412, 'recoverable: Keygate stores only hashes; a key cannot be shown again'],
          [{ expires: 1_000 }, 400, 'expires: must be unix milliseconds (this looks like seconds)'],
          [{ ratelimit: { limit: 10 } }, 400, 'ratelimit: needs limit and duration (ms, at least 1000)'],
        ]
        for (const [i, [fields, status, message]] of rules.entries()) {
          const alone = await post('keys.createKey', { apiId, ...fields })
          expect({ fields, status: alone.status, message: alone.body.error.message }).toEqual({
            fields,
            status,
            message,
          })
          for (const [later] of rules.slice(i + 1)) {
            // Two rules on one field (refill, ratelimit) cannot both be broken by one body.
            if (Object.keys(later).some((field) => field in fields)) continue
            const both = await post('keys.createKey', { apiId, ...fields, ...later })
            expect({ fields, later, message: both.body.error.message }).toEqual({ fields, later, message })
          }
        }
        expect((await get(`apis.listKeys?apiId=${apiId}`)).body.total).toBe(0)
      })

      it('checks limits: names, prefixes, byteLength, meta size and depth, body size', async () => {
        const apiId = await createApi()
        expect((await post('apis.createApi', { name: '' })).status).toBe(400)
        expect((await post('apis.createApi', { name: 'x'.repeat(257) })).status).toBe(400)
        expect((await post('keys.createKey', { apiId, prefix: 'bad_prefix' })).status).toBe(400)
        expect((await post('keys.createKey', { apiId, byteLength: 15 })).status).toBe(400)
        expect((await post('keys.createKey', { apiId, byteLength: 256 })).status).toBe(400)
        expect(await post('keys.createKey', { apiId, meta: { blob: 'x'.repeat(70_000) } })).toMatchObject({
          status: 413,
          body: errorShape('PAYLOAD_TOO_LARGE'),
        })
        let deep: Json = {}
        for (let i = 0; i < 20; i++) deep = { d: deep }
        expect((await post('keys.createKey', { apiId, meta: deep })).status).toBe(400)
        expect((await post('keys.createKey', { apiId, meta: [1, 2] })).status).toBe(400)
        // Far deeper than any stack: still a clear 400, on create and on update.
        const abyss = `${'['.repeat(10_000)}1${']'.repeat(10_000)}`
        expect(await post('keys.createKey', `{"apiId":"${apiId}","meta":{"abyss":${abyss}}}`)).toMatchObject({
          status: 400,
          body: errorShape('BAD_REQUEST'),
        })
        const { keyId } = await createKey(apiId)
        expect(await post('keys.updateKey', `{"keyId":"${keyId}","meta":{"abyss":${abyss}}}`)).toMatchObject({
          status: 400,
          body: errorShape('BAD_REQUEST'),
        })
        expect((await get(`keys.getKey?keyId=${keyId}`)).body).not.toHaveProperty('meta')
        const huge = await server.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: { 'content-type': 'application/json' },
          payload: JSON.stringify({ key: 'x'.repeat(1_100_000) }),
        })
        expect(huge.statusCode).toBe(413)
        expect(huge.json()).toEqual(errorShape('PAYLOAD_TOO_LARGE'))
        expect((await get(`apis.listKeys?apiId=${apiId}`)).body.total).toBe(1)
      })

      it('answers 415 for a POST without a JSON content type, 405 for a wrong method, 404 for no route', async () => {
        const plain = await server.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: { 'content-type': 'text/plain' },
          payload: 'key',
        })
        expect(plain.statusCode).toBe(415)
        expect(plain.json()).toEqual(errorShape('UNSUPPORTED_MEDIA_TYPE'))
        const none = await server.app.inject({ method: 'POST', url: '/v1/keys.verifyKey' })
        expect(none.statusCode).toBe(415)
        const wrongMethod = await server.app.inject({ method: 'GET', url: '/v1/keys.createKey', headers: auth })
        expect(wrongMethod.statusCode).toBe(405)
        expect(wrongMethod.headers.allow).toBe('POST')
        expect(wrongMethod.json()).toEqual(errorShape('METHOD_NOT_ALLOWED'))
        const put = await server.app.inject({ method: 'PUT', url: '/v1/apis.getApi' })
        expect(put.statusCode).toBe(405)
        const missing = await get('keys.nope')
        expect(missing).toMatchObject({ status: 404, body: errorShape('NOT_FOUND') })
      })

      it('answers 404 for ids that match nothing, well formed or not', async () => {
        expect(await get('keys.getKey?keyId=key_1111111111111111111111')).toMatchObject({
          status: 404,
          body: errorShape('NOT_FOUND'),
        })
        expect((await get('keys.getKey?keyId=whatever')).status).toBe(404)
        expect((await get('apis.getApi?apiId=nope')).status).toBe(404)
        expect((await post('keys.updateKey', { keyId: 'key_nope', enabled: false })).status).toBe(404)
        expect((await post('keys.createKey', { apiId: 'api_nope' })).status).toBe(404)
      })

      it('accepts a GET with a JSON content type and no body (as Unkey’s SDK sends)', async () => {
        const apiId = await createApi()
        const response = await server.app.inject({
          method: 'GET',
          url: `/v1/apis.getApi?apiId=${apiId}`,
          headers: { ...auth, 'content-type': 'application/json' },
        })
        expect(response.statusCode).toBe(200)
      })

      it('echoes a safe X-Request-Id and replaces an unsafe one', async () => {
        const echoed = await server.app.inject({
          method: 'GET',
          url: '/v1/liveness',
          headers: { 'x-request-id': 'abc.DEF-123_x' },
        })
        expect(echoed.headers['x-request-id']).toBe('abc.DEF-123_x')
        const replaced = await server.app.inject({
          method: 'GET',
          url: '/v1/keys.nope',
          headers: { 'x-request-id': 'bad id<script>' },
        })
        expect(replaced.headers['x-request-id']).toMatch(/^req_/)
        expect(replaced.json().error.requestId).toBe(replaced.headers['x-request-id'])
      })
    })

    describe('root keys: UNAUTHORIZED vs INSUFFICIENT_PERMISSIONS', () => {
      it('answers 403 UNAUTHORIZED with WWW-Authenticate without a bearer, with a wrong root key, and with an ordinary key', async () => {
        const apiId = await createApi()
        const { key } = await createKey(apiId)
        for (const headers of [
          {} as Record<string, string>,
          { authorization: 'Basic abc' },
          { authorization: 'Bearer wrong-root-key-000000' },
          { authorization: `Bearer ${key}` },
        ]) {
          const response = await post('apis.createApi', { name: 'x' }, headers)
          // 403 as Unkey v1 answered it; the code tells it from a root key without the permission.
          expect(response.status).toBe(403)
          expect(response.body.error.code).toBe('UNAUTHORIZED')
          expect(response.headers['www-authenticate']).toBe('Bearer')
        }
        // Authentication comes before validation: no schema details for strangers.
        expect((await post('keys.createKey', { wrong: true }, {})).body.error.code).toBe('UNAUTHORIZED')
        expect((await get(`apis.getApi?apiId=${apiId}`, {})).body.error.code).toBe('UNAUTHORIZED')
      })

      it('answers 403 when a stored root key lacks the permission, and lets it do what it may', async () => {
        const apiId = await createApi()
        const otherApiId = await createApi()
        const { keyId } = await createKey(apiId)
        const { keyId: otherKeyId } = await createKey(otherApiId)
        const { key: readerKey, hash } = generateRootKey()
        await server.backend.store.rootKeys.createRootKey({
          id: newId('root'),
          hash,
          permissions: [`api.${apiId}.read_key`, `api.${apiId}.read_api`],
          createdAt: Date.now(),
        })
        const reader = { authorization: `Bearer ${readerKey}` }

        expect((await get(`keys.getKey?keyId=${keyId}`, reader)).status).toBe(200)
        expect((await get(`apis.listKeys?apiId=${apiId}`, reader)).status).toBe(200)
        const denied = await get(`keys.getKey?keyId=${otherKeyId}`, reader)
        expect(denied).toMatchObject({ status: 403, body: { error: { code: 'INSUFFICIENT_PERMISSIONS' } } })
        expect((await post('keys.updateKey', { keyId, enabled: false }, reader)).status).toBe(403)
        // Permission before content: no 400 (or 413) tells a reader about the key's api.
        expect(
          (await post('keys.updateKey', { keyId, remaining: 1, meta: { x: 'y'.repeat(70_000) } }, reader)).status,
        ).toBe(403)
        expect((await post('keys.createKey', { apiId }, reader)).status).toBe(403)
        expect((await post('apis.createApi', { name: 'xyz' }, reader)).status).toBe(403)
        expect((await post('apis.deleteApi', { apiId }, reader)).status).toBe(403)
        expect((await get(`keys.getKey?keyId=${keyId}`)).body.enabled).toBe(true)
      })

      it('answers a root key without create_key 403 before anything about the key it sent', async () => {
        const apiId = await createApi()
        const { key: readerKey, hash } = generateRootKey()
        await server.backend.store.rootKeys.createRootKey({
          id: newId('root'),
          hash,
          permissions: [`api.${apiId}.read_key`, `api.${apiId}.read_api`],
          createdAt: Date.now(),
        })
        const reader = { authorization: `Bearer ${readerKey}` }
        // v1's own spellings (read before the key's fields are) and the key's fields: none is told to this root key.
        for (const fields of [
          { ipWhitelist: ['nope'] },
          { ownerId: 'a', externalId: 'b' },
          { ratelimit: { limit: 10 } },
          { refill: { interval: 'daily', amount: 1 } },
          { meta: { blob: 'x'.repeat(70_000) } },
          { recoverable: true },
          { expires: 1_000 },
        ]) {
          const refused = await post('keys.createKey', { apiId, ...fields }, reader)
          expect({ fields, status: refused.status, code: refused.body.error.code }).toEqual({
            fields,
            status: 403,
            code: 'INSUFFICIENT_PERMISSIONS',
          })
        }
      })

      it('grants api.*.<action> on every api', async () => {
        const apiId = await createApi()
        const { key: creatorKey, hash } = generateRootKey()
        await server.backend.store.rootKeys.createRootKey({
          id: newId('root'),
          hash,
          permissions: ['api.*.create_key'],
          createdAt: Date.now(),
        })
        expect((await post('keys.createKey', { apiId }, { authorization: `Bearer ${creatorKey}` })).status).toBe(200)
      })
    })
  })
}
