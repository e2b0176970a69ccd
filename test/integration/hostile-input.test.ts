import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'

/**
 * Hostile input, property-based and seeded: thousands of malformed requests at every operation of both
 * servers. Every answer must be < 500 (4xx in the contract's error shape), nothing may pollute a
 * prototype, and a victim api's data must be exactly as before.
 */
const OPERATIONS: { method: string; path: string; server: 'controlPlane' | 'verifier' }[] = [
  ...[
    'apis.createApi',
    'apis.deleteApi',
    'apis.deleteKeys',
    'keys.createKey',
    'keys.updateKey',
    'keys.deleteKey',
    'keys.updateRemaining',
    'keys.whoami',
    'keys.rerollKey',
    'keys.addPermissions',
    'keys.setPermissions',
    'keys.removePermissions',
    'keys.addRoles',
    'keys.setRoles',
    'keys.removeRoles',
    'keys.verifyKey',
  ].map((path) => ({ method: 'POST', path: `/v1/${path}`, server: 'controlPlane' as const })),
  ...['apis.getApi', 'apis.listKeys', 'keys.getKey', 'keys.getVerifications', 'audit.list', 'liveness'].map((path) => ({
    method: 'GET',
    path: `/v1/${path}`,
    server: 'controlPlane' as const,
  })),
  { method: 'POST', path: '/v1/keys.verifyKey', server: 'verifier' },
  { method: 'GET', path: '/v1/authorize', server: 'verifier' },
  { method: 'POST', path: '/v1/authorize/x', server: 'verifier' },
  { method: 'GET', path: '/readyz', server: 'verifier' },
]

const lone = fc.constantFrom('\ud800', '\udfff', 'a\ud800b', '\u0000', '\u202e', '𝔘𝔫𝔦')
const hostileString = fc.oneof(
  fc.string({ maxLength: 50 }),
  lone,
  fc.nat({ max: 300_000 }).map((n) => 'x'.repeat(n)),
)
const hostileValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileString,
    fc.integer(),
    fc.double(),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.oneof(
        fc.string({ maxLength: 12 }),
        fc.constantFrom(
          'apiId',
          'keyId',
          'key',
          'name',
          'meta',
          'enabled',
          'remaining',
          'ratelimit',
          'permissions',
          'roles',
          'toString',
          'hasOwnProperty',
        ),
      ),
      tie('value'),
      { maxKeys: 5 },
    ),
  ),
})).value
/** Bodies that pass the front door and reach the handlers: each operation's own fields, each plausible or hostile. */
const sandbox = { apiId: '', keyId: '', key: '' }
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  apiId: fc.constant(null).map(() => sandbox.apiId),
  keyId: fc.constant(null).map(() => sandbox.keyId),
  key: fc.constant(null).map(() => sandbox.key),
  name: fc.string({ maxLength: 20 }),
  prefix: fc.constantFrom('sk', 'pk', 'a1'),
  byteLength: fc.integer({ min: 16, max: 64 }),
  externalId: fc.string({ minLength: 1, maxLength: 20 }),
  environment: fc.constantFrom('live', 'test'),
  meta: fc.dictionary(fc.string({ maxLength: 8 }), hostileValue, { maxKeys: 8 }),
  expires: fc.integer({ min: Date.now() + 60_000, max: Date.now() + 1e10 }),
  remaining: fc.integer({ min: 1, max: 1e6 }),
  refill: fc.record({ interval: fc.constantFrom('daily', 'monthly'), amount: fc.integer({ min: 1, max: 100 }) }),
  ratelimit: fc.record({
    limit: fc.integer({ min: 1, max: 100 }),
    duration: fc.integer({ min: 1_000, max: 100_000 }),
    async: fc.boolean(),
  }),
  permissions: fc.array(fc.constantFrom('a', 'b.c', 'd:e'), { maxLength: 3 }),
  roles: fc.array(fc.constantFrom('admin', 'viewer'), { maxLength: 3 }),
  enabled: fc.boolean(),
  permanent: fc.boolean(),
  op: fc.constantFrom('increment', 'decrement', 'set'),
  value: fc.integer({ min: 0, max: 1e6 }),
  expiration: fc.integer({ min: 0, max: 1e6 }),
  tags: fc.array(fc.string({ maxLength: 10 }), { maxLength: 3 }),
  authorization: fc.record({
    permissions: fc.oneof(
      fc.constantFrom('a', 'b.c'),
      fc.record({ and: fc.array(fc.constantFrom('a', 'x'), { minLength: 1, maxLength: 3 }) }),
    ),
  }),
  remainingCost: fc.record({ cost: fc.integer({ min: 0, max: 5 }) }),
  ratelimits: fc.array(
    fc.record({
      name: fc.constantFrom('r1', 'r2'),
      limit: fc.integer({ min: 1, max: 5 }),
      duration: fc.integer({ min: 1_000, max: 10_000 }),
    }),
    { maxLength: 2 },
  ),
  nameRefs: fc.array(fc.record({ name: fc.constantFrom('a', 'b', 'c') }), { minLength: 1, maxLength: 3 }),
}
const FIELDS: Record<string, string[]> = {
  'apis.createApi': ['name'],
  'apis.deleteApi': ['apiId'],
  'apis.deleteKeys': ['apiId', 'permanent'],
  'keys.createKey': [
    'apiId',
    'name',
    'prefix',
    'byteLength',
    'externalId',
    'meta',
    'expires',
    'remaining',
    'refill',
    'ratelimit',
    'permissions',
    'roles',
    'enabled',
    'environment',
  ],
  'keys.updateKey': [
    'keyId',
    'name',
    'externalId',
    'meta',
    'expires',
    'remaining',
    'refill',
    'ratelimit',
    'permissions',
    'roles',
    'enabled',
  ],
  'keys.deleteKey': ['keyId', 'permanent'],
  'keys.updateRemaining': ['keyId', 'op', 'value'],
  'keys.whoami': ['key'],
  'keys.rerollKey': ['keyId', 'expiration', 'prefix'],
  'keys.verifyKey': ['key', 'apiId', 'authorization', 'remaining', 'ratelimits', 'tags'],
}
function bodyFor(path: string): fc.Arbitrary<string> {
  const operation = path.slice('/v1/'.length)
  const fields =
    FIELDS[operation] ??
    (operation.startsWith('keys.') ? ['keyId', /Roles$/.test(operation) ? 'roles' : 'permissions'] : [])
  const record: Record<string, fc.Arbitrary<unknown>> = {}
  for (const field of fields) {
    const good =
      field === 'remaining' && operation === 'keys.verifyKey'
        ? plausible.remainingCost!
        : (field === 'permissions' || field === 'roles') && /Permissions$|Roles$/.test(operation)
          ? plausible.nameRefs!
          : (plausible[field] ?? hostileValue)
    // Mostly plausible, so that requests get past validation into the handlers; one field in ten hostile.
    record[field] = fc.oneof({ weight: 9, arbitrary: good }, { weight: 1, arbitrary: hostileValue })
  }
  const required = fields.slice(0, 1)
  return fc.record(record, { requiredKeys: required }).map((value) => JSON.stringify(value))
}
const body = fc.oneof(
  hostileValue.map((v) => JSON.stringify(v) ?? 'null'),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '{"__proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
    '{"apiId":"a","__proto__":{"polluted":true}}',
    '{"key":"x","authorization":{"permissions":{"__proto__":["a"]}}}',
    '',
    '{',
    'null',
    '[]',
    '"\\ud800"',
    '{"a":1,"a":2}',
  ),
  fc.nat({ max: 20_000 }).map((n) => `${'['.repeat(n)}${']'.repeat(n)}`),
  fc.nat({ max: 2_000 }).map((n) => `{"meta":${'{"a":'.repeat(n)}1${'}'.repeat(n)}}`),
)
const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/json',
  'application/json',
  'application/json',
  'application/json',
  'application/json; charset=utf-8',
  'text/plain',
  '',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json;;;',
  'APPLICATION/JSON',
)
const authorization = fc.constantFrom(
  ...Array<string>(12).fill(`Bearer ${TEST_ROOT_KEY}`),
  '',
  'Bearer ',
  'Basic dXNlcjpwYXNz',
  `Bearer ${'x'.repeat(10_000)}`,
  'bearer\tspace',
  `Bearer ${TEST_ROOT_KEY} extra`,
)
const queryPart = fc.tuple(
  fc.constantFrom(
    'apiId',
    'keyId',
    'limit',
    'cursor',
    'start',
    'end',
    'granularity',
    'decrypt',
    'externalId',
    '__proto__',
    'constructor',
    'x',
  ),
  fc.oneof(
    fc.string({ maxLength: 30 }),
    fc.constantFrom('-1', '1e309', 'NaN', '%', '%00', '[]', 'true', '9'.repeat(40)),
  ),
)
const query = fc
  .array(queryPart, { maxLength: 6 })
  .map((parts) => parts.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'))
const method = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') },
)

const redis = useRedisServer()

for (const store of ['memory', 'redis'] as const) {
  describe(`hostile input on the ${store} store`, () => {
    let backend: Backend
    const servers = {} as Record<'controlPlane' | 'verifier', TestServer>
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }
    let victim: { apiId: string; keyId: string; key: string }

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      servers.controlPlane = await startTestControlPlane({ backend })
      // Any api: hostile input reaches the verdict, not only the unbound-verifier refusal.
      const gateway = { anyApi: true }
      servers.verifier = await startTestVerifier(
        store === 'redis' ? { redisUrl: redis.url, gateway } : { backend, gateway },
      )
      const api = (
        await servers.controlPlane.app.inject({
          method: 'POST',
          url: '/v1/apis.createApi',
          headers,
          payload: { name: 'victim' },
        })
      ).json()
      const created = (
        await servers.controlPlane.app.inject({
          method: 'POST',
          url: '/v1/keys.createKey',
          headers,
          payload: { apiId: api.apiId, name: 'victim', meta: { a: 1 }, remaining: 5, permissions: ['p'] },
        })
      ).json()
      victim = { apiId: api.apiId, ...created }
      // A sandbox the fuzzer may change at will (the victim above is never named in a request).
      const sandboxApi = (
        await servers.controlPlane.app.inject({
          method: 'POST',
          url: '/v1/apis.createApi',
          headers,
          payload: { name: 'sandbox' },
        })
      ).json()
      const sandboxKey = (
        await servers.controlPlane.app.inject({
          method: 'POST',
          url: '/v1/keys.createKey',
          headers,
          payload: { apiId: sandboxApi.apiId },
        })
      ).json()
      Object.assign(sandbox, { apiId: sandboxApi.apiId, keyId: sandboxKey.keyId, key: sandboxKey.key })
    })
    afterAll(async () => {
      await servers.verifier.close()
      await servers.controlPlane.close()
      await backend.close()
    })

    const snapshot = async () => ({
      api: (
        await servers.controlPlane.app.inject({ method: 'GET', url: `/v1/apis.getApi?apiId=${victim.apiId}`, headers })
      ).json(),
      keys: (
        await servers.controlPlane.app.inject({
          method: 'GET',
          url: `/v1/apis.listKeys?apiId=${victim.apiId}`,
          headers,
        })
      ).json(),
    })

    it('answers thousands of malformed requests with a 4xx in the contract shape: no 5xx, no hang, no pollution, no data change', async () => {
      const before = await snapshot()
      const seen = new Map<number, number>()
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...OPERATIONS)
            .chain((op) =>
              fc.tuple(
                fc.constant(op),
                fc.oneof({ weight: 2, arbitrary: bodyFor(op.path) }, { weight: 1, arbitrary: body }),
              ),
            ),
          contentType,
          authorization,
          query,
          method,
          async ([op, payload], type, auth, qs, otherMethod) => {
            const requestHeaders: Record<string, string> = {}
            if (type) requestHeaders['content-type'] = type
            if (auth) requestHeaders.authorization = auth
            const response = await servers[op.server].app.inject({
              method: (otherMethod ?? op.method) as 'GET',
              url: `${op.path}${qs ? `?${qs}` : ''}`,
              headers: requestHeaders,
              payload:
                (otherMethod ?? op.method) === 'GET' || (otherMethod ?? op.method) === 'HEAD' ? undefined : payload,
            })
            const verb = otherMethod ?? op.method
            seen.set(response.statusCode, (seen.get(response.statusCode) ?? 0) + 1)
            expect(
              response.statusCode,
              `${verb} ${op.path}?${qs.slice(0, 80)} ${type} ${payload.slice(0, 80)}`,
            ).toBeLessThan(500)
            // Forward-auth answers are status-only by design; HEAD answers have no body.
            if (response.statusCode >= 400 && !op.path.startsWith('/v1/authorize') && verb !== 'HEAD') {
              const error = response.json().error
              expect(error).toMatchObject({
                code: expect.any(String),
                message: expect.any(String),
                docs: expect.any(String),
                requestId: response.headers['x-request-id'],
              })
            }
          },
        ),
        { numRuns: 2_500, seed: 20261122, endOnFailure: true },
      )
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined()
      expect(await snapshot()).toEqual(before)
      const verdict = (
        await servers.verifier.app.inject({
          method: 'POST',
          url: '/v1/keys.verifyKey',
          headers: { 'content-type': 'application/json' },
          payload: { key: victim.key, remaining: { cost: 0 } },
        })
      ).json()
      expect(verdict).toMatchObject({ valid: true, remaining: 5 })
      // The run reached the handlers, not only the front door.
      expect([...seen.keys()].sort()).toEqual(expect.arrayContaining([200, 400, 403, 404, 405, 415]))
    }, 120_000)
  })
}
