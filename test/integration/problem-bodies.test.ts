import { afterAll, beforeAll, expect, it } from 'vitest'
import { startTestControlPlane, type TestServer } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY } from '../support/both-stores.js'

/**
 * The wire of an error, pinned whole for a representative set across the services: v2's problem body (status,
 * title, detail, type, errors[] with each location and message) and v1's (status, code, message): the kind of record
 * not found and the field a 400 concerns are the client's to match on.
 */

let server: TestServer
/** Every id the server made for this test, by the placeholder that stands for it in the pinned answers. */
const ids = new Map<string, string>()
let keyId: string
let key: string
/** A root key that may read apis and set overrides, nothing else (no namespace made on first use). */
let limitedRootKey: string

type Headers = Record<string, string>

/** The request's answer with the ids this test made replaced by their placeholders and the request id left out. */
async function answer(
  method: 'POST' | 'GET',
  url: string,
  payload?: object | string,
  headers: Headers = ADMIN_HEADERS,
) {
  const response = await server.app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload }) })
  let text = response.body
  for (const [placeholder, id] of ids) text = text.replaceAll(id, placeholder)
  const body = JSON.parse(text)
  delete body.meta
  if (body.error) {
    delete body.error.requestId
    delete body.error.docs
  }
  return { status: response.statusCode, body }
}
const v2 = (operation: string, payload?: object | string, headers?: Headers) =>
  answer('POST', `/v2/${operation}`, payload, headers)
const v1 = (operation: string, payload?: object | string, headers?: Headers) =>
  answer('POST', `/v1/${operation}`, payload, headers)
const bearer = (rootKey: string) => ({ ...JSON_ONLY, authorization: `Bearer ${rootKey}` })

/** v2's problem body of one error. */
const problem = (status: number, title: string, detail: string, type: string, errors?: object[]) => ({
  status,
  body: {
    error: {
      title,
      detail,
      status,
      type: `https://unkey.com/docs/errors/${type}`,
      ...(errors ? { errors } : {}),
    },
  },
})
const badRequest = (detail: string, errors: object[], type = 'unkey/application/invalid_input') =>
  problem(400, 'Bad Request', detail, type, errors)
const notFound = (detail: string, record?: string) =>
  problem(404, 'Not Found', detail, `unkey/data/${record ? `${record}_not_found` : 'not_found'}`)
const v1Error = (status: number, code: string, message: string) => ({ status, body: { error: { code, message } } })

beforeAll(async () => {
  server = await startTestControlPlane()
  const post = async (operation: string, payload: object, headers: Headers = ADMIN_HEADERS) => {
    const response = await server.app.inject({ method: 'POST', url: `/v1/${operation}`, headers, payload })
    expect(response.statusCode).toBe(200)
    return response.json()
  }
  const apiId: string = (await post('apis.createApi', { name: 'pinned errors' })).apiId
  ids.set('<apiId>', apiId)
  ;({ keyId, key } = await post('keys.createKey', { apiId }))
  ids.set('<keyId>', keyId)
  await post('identities.createIdentity', { externalId: 'pinned-identity' })
  await post('permissions.createPermission', { name: 'pinned.permission' })
  await post('permissions.createRole', { name: 'pinned-role' })
  await post('ratelimits.setOverride', {
    namespaceName: 'pinned-namespace',
    identifier: 'someone',
    limit: 1,
    duration: 1000,
  })
  limitedRootKey = (
    await post('rootKeys.createRootKey', { permissions: ['ratelimit.*.set_override', 'api.*.read_api'] })
  ).key
})

afterAll(async () => {
  await server.close()
})

it('v2 answers a root key missing or malformed 400 at header.authorization, an unknown one 401', async () => {
  const send = 'send a root key as `Authorization: Bearer <root key>`'
  const at = [{ location: 'header.authorization', message: send }]
  expect(await v2('apis.getApi', { apiId: 'api_x' }, JSON_ONLY)).toEqual(
    badRequest(`authorization: ${send}`, at, 'unkey/authentication/missing'),
  )
  expect(await v2('apis.getApi', { apiId: 'api_x' }, { ...JSON_ONLY, authorization: 'Basic x' })).toEqual(
    badRequest(`authorization: ${send}`, at, 'unkey/authentication/malformed'),
  )
  expect(await v2('apis.getApi', { apiId: 'api_x' }, bearer('nope'))).toEqual(
    problem(401, 'Unauthorized', 'authorization: the root key is not valid', 'unkey/authentication/key_not_found'),
  )
  expect(await v2('apis.createApi', { name: 'refused' }, bearer(limitedRootKey))).toEqual(
    problem(
      403,
      'Insufficient Permissions',
      'the root key needs api.*.create_api',
      'unkey/authorization/insufficient_permissions',
    ),
  )
})

it('v2 names the kind of record not found', async () => {
  expect(await v2('apis.getApi', { apiId: 'api_missing' })).toEqual(notFound('api api_missing not found', 'api'))
  expect(await v2('apis.listKeys', { apiId: 'api_missing' }, bearer(limitedRootKey))).toEqual(
    notFound('api api_missing not found', 'api'),
  )
  expect(await v2('keys.createKey', { apiId: 'api_missing' })).toEqual(notFound('api api_missing not found', 'api'))
  expect(await v2('keys.getKey', { keyId: 'key_missing' })).toEqual(notFound('key key_missing not found', 'key'))
  expect(await v2('keys.whoami', { key: 'no-such-key' })).toEqual(notFound('key not found', 'key'))
  expect(await v2('identities.getIdentity', { identity: 'nobody' })).toEqual(
    notFound('identity nobody not found', 'identity'),
  )
  expect(await v2('identities.updateIdentity', { identity: 'nobody', meta: {} })).toEqual(
    notFound('identity nobody not found', 'identity'),
  )
  expect(await v2('permissions.getPermission', { permission: 'perm_missing' })).toEqual(
    notFound('permission perm_missing not found', 'permission'),
  )
  expect(await v2('permissions.deleteRole', { role: 'role_missing' })).toEqual(
    notFound('role role_missing not found', 'role'),
  )
  expect(await v2('keys.addRoles', { keyId, roles: ['no-such-role'] })).toEqual(
    notFound('role "no-such-role" not found', 'role'),
  )
  expect(await v2('keys.removePermissions', { keyId, permissions: ['perm_gone'] })).toEqual(
    notFound('permission "perm_gone" not found', 'permission'),
  )
  expect(await v2('ratelimit.getOverride', { namespace: 'no-namespace', identifier: 'x' })).toEqual(
    notFound('namespace no-namespace not found', 'ratelimit_namespace'),
  )
  expect(await v2('ratelimit.getOverride', { namespace: 'pinned-namespace', identifier: 'x' })).toEqual(
    notFound('override for x not found', 'ratelimit_override'),
  )
  expect(
    await v2(
      'ratelimit.setOverride',
      { namespace: 'new-namespace', identifier: 'x', limit: 1, duration: 1000 },
      bearer(limitedRootKey),
    ),
  ).toEqual(notFound('Namespace new-namespace not found', 'ratelimit_namespace'))
  expect(await v2('apis.getapi', { apiId: 'x' })).toEqual(
    notFound('no operation at POST /v2/apis.getapi; did you mean apis.getApi?'),
  )
})

it('v2 locates a schema 400 at the field, nested or unknown', async () => {
  expect(await v2('apis.createApi', { name: 'ab' })).toEqual(
    badRequest('name: must be at least 3 characters', [
      { location: 'body.name', message: 'must be at least 3 characters' },
    ]),
  )
  expect(
    await v2('keys.createKey', { apiId: 'api_x', ratelimits: [{ name: 'r', limit: 'ten', duration: 1000 }] }),
  ).toEqual(
    badRequest('ratelimits.0.limit: must be an integer', [
      { location: 'body.ratelimits.0.limit', message: 'must be an integer' },
    ]),
  )
  expect(await v2('apis.createApi', { name: 'abc', nmae: 'x' })).toEqual(
    badRequest('nmae: is not a known field (did you mean name?)', [
      { location: 'body.nmae', message: 'is not a known field (did you mean name?)' },
    ]),
  )
  expect(await v2('apis.createApi', { nmae: 'abc' })).toEqual(
    badRequest('nmae: is not a known field (did you mean name?); name: is required', [
      { location: 'body.nmae', message: 'is not a known field (did you mean name?); name: is required' },
    ]),
  )
  expect(await v2('apis.createApi', { name: 'abc', 'odd name': 1 })).toEqual(
    badRequest('odd name: is not a known field', [{ location: 'body', message: 'odd name: is not a known field' }]),
  )
  expect(
    await v2('keys.createKey', { apiId: 'api_x', ratelimits: [{ name: 'r', limit: 1, duration: 1000, 'a b': 1 }] }),
  ).toEqual(
    badRequest('ratelimits.0.a b: is not a known field', [
      { location: 'body', message: 'ratelimits.0.a b: is not a known field' },
    ]),
  )
  expect(await v2('keys.createKey', { apiId: 'api_x', credits: 'x' })).toEqual(
    badRequest('credits: must be an object', [{ location: 'body.credits', message: 'must be an object' }]),
  )
  // A field of the body named like a header is the body's (v1's verifyKey takes `authorization` in the body).
  expect(await v2('keys.verifyKey', { key, authorization: { permissions: 'a' } })).toEqual(
    badRequest('authorization: is not a known field', [
      { location: 'body.authorization', message: 'is not a known field' },
    ]),
  )
  expect(await v2('keys.verifyKey', { key: 1 })).toEqual(
    badRequest('key: must be a string', [{ location: 'body.key', message: 'must be a string' }]),
  )
  expect(await v2('apis.createApi', [])).toEqual(
    badRequest('body: must be an object', [{ location: 'body', message: 'must be an object' }]),
  )
  const notJson =
    'is not valid JSON: unexpected end of body at position 8 (expected a value: an object, array, string, number, true, false or null)'
  expect(await v2('apis.createApi', '{"name":')).toEqual(
    badRequest(`body: ${notJson}`, [{ location: 'body', message: notJson }]),
  )
  expect(await v2('apis.createApi', '')).toEqual(
    badRequest('body: is empty; send a JSON object', [{ location: 'body', message: 'is empty; send a JSON object' }]),
  )
})

it('v2 locates a 400 an operation raises at the field it names', async () => {
  expect(await v2('keys.createKey', { apiId: 'api_x', expires: 1_700_000_000 })).toEqual(
    badRequest('expires: must be unix milliseconds (this looks like seconds)', [
      { location: 'body.expires', message: 'must be unix milliseconds (this looks like seconds)' },
    ]),
  )
  expect(
    await v2('keys.createKey', {
      apiId: 'api_x',
      credits: { remaining: null, refill: { interval: 'daily', amount: 5 } },
    }),
  ).toEqual(
    badRequest('credits.remaining: must be given (not null) when credits.refill is set', [
      { location: 'body.credits.remaining', message: 'must be given (not null) when credits.refill is set' },
    ]),
  )
  expect(await v2('keys.updateCredits', { keyId, operation: 'increment', value: 1 })).toEqual(
    badRequest("operation: the key carries no credits (no limit) to increment; 'set' a value instead", [
      {
        location: 'body.operation',
        message: "the key carries no credits (no limit) to increment; 'set' a value instead",
      },
    ]),
  )
  // v1 answers these two 413 and 409; v2 400, at the field when there is one.
  const meta = { blob: 'x'.repeat(70_000) }
  expect(await v2('keys.createKey', { apiId: 'api_x', meta })).toEqual(
    badRequest('meta: is larger than 65536 bytes', [{ location: 'body.meta', message: 'is larger than 65536 bytes' }]),
  )
  const twice = { name: 'twice', limit: 1, duration: 1000 }
  const definedTwice = 'Ratelimit with name "twice" is already defined in the request'
  expect(await v2('keys.createKey', { apiId: 'api_x', ratelimits: [twice, twice] })).toEqual(
    badRequest(definedTwice, [{ location: 'body', message: definedTwice }]),
  )
  expect(await v2('identities.createIdentity', { externalId: 'twice', ratelimits: [twice, twice] })).toEqual(
    badRequest(definedTwice, [{ location: 'body', message: definedTwice }]),
  )
  const hash = 'n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg='
  const migrate = (fields: object) =>
    v2('keys.migrateKeys', { migrationId: 'sha256', apiId: ids.get('<apiId>'), keys: [{ hash, ...fields }] })
  expect(await migrate({ credits: { remaining: 1, refill: { interval: 'daily', amount: 1, refillDay: 2 } } })).toEqual(
    badRequest('keys.0.credits.refill.refillDay: only for a monthly refill', [
      { location: 'body.keys.0.credits.refill.refillDay', message: 'only for a monthly refill' },
    ]),
  )
  expect(await migrate({ credits: { remaining: null, refill: { interval: 'daily', amount: 1 } } })).toEqual(
    badRequest('keys.0.credits.refill: needs remaining (a key without credits has nothing to refill)', [
      {
        location: 'body.keys.0.credits.refill',
        message: 'needs remaining (a key without credits has nothing to refill)',
      },
    ]),
  )
  expect(await migrate({ meta })).toEqual(
    badRequest('keys.0.meta: is larger than 65536 bytes', [
      { location: 'body.keys.0.meta', message: 'is larger than 65536 bytes' },
    ]),
  )
  expect(await migrate({ ratelimits: [twice, twice] })).toEqual(
    badRequest('keys.0: Ratelimit with name "twice" is already defined in the request', [
      { location: 'body.keys.0', message: 'Ratelimit with name "twice" is already defined in the request' },
    ]),
  )
  expect(
    await v2('keys.migrateKeys', { migrationId: 'sha256', apiId: ids.get('<apiId>'), keys: [{ hash: 'abc' }] }),
  ).toEqual(
    badRequest('keys.0.hash: must be a SHA-256 in standard base64 (44 characters), as Unkey stores it', [
      {
        location: 'body.keys.0.hash',
        message: 'must be a SHA-256 in standard base64 (44 characters), as Unkey stores it',
      },
    ]),
  )
  const unended = 'Unexpected end of query. Expected a permission identifier or opening parenthesis.'
  expect(await v2('keys.verifyKey', { key, permissions: 'a AND (' })).toEqual(
    badRequest(
      `permissions: ${unended}`,
      [{ location: 'body.permissions', message: unended }],
      'user/bad_request/permissions_query_syntax_error',
    ),
  )
})

it('v2 answers a 409, a 412, a 405 and a 415 with their types and no errors', async () => {
  expect(await v2('identities.createIdentity', { externalId: 'pinned-identity' })).toEqual(
    problem(
      409,
      'Conflict',
      'Identity with externalId "pinned-identity" already exists in this workspace',
      'unkey/data/identity_already_exists',
    ),
  )
  expect(await v2('permissions.createPermission', { name: 'pinned.permission', slug: 'pinned.permission' })).toEqual(
    problem(
      409,
      'Conflict',
      'Permission with name "pinned.permission" already exists in this workspace',
      'unkey/data/permission_already_exists',
    ),
  )
  expect(await v2('permissions.createRole', { name: 'pinned-role' })).toEqual(
    problem(
      409,
      'Conflict',
      'Role with name "pinned-role" already exists in this workspace',
      'unkey/data/role_already_exists',
    ),
  )
  expect(await v2('keys.getKey', { keyId, decrypt: true })).toEqual(
    problem(
      412,
      'Precondition Failed',
      'decrypt: Keygate stores only hashes; keys cannot be shown again',
      'unkey/application/precondition_failed',
    ),
  )
  expect(await v2('keys.verifyKey', { key, ratelimits: [{ name: 'nope' }] })).toEqual(
    problem(
      412,
      'Precondition Failed',
      "ratelimit 'nope' was requested but does not exist for key '<keyId>' and there is no identity connected; give limit and duration to define one for this call",
      'unkey/application/precondition_failed',
    ),
  )
  expect(await answer('GET', '/v2/apis.getApi')).toEqual(
    problem(405, 'Method Not Allowed', '/v2/apis.getApi does not answer GET', 'user/bad_request/method_not_allowed'),
  )
  expect(await v2('apis.getApi', 'apiId=x', { ...ADMIN_HEADERS, 'content-type': 'text/plain' })).toEqual(
    problem(
      415,
      'Unsupported Media Type',
      'content-type: must be application/json',
      'user/bad_request/request_body_unreadable',
    ),
  )
})

it('v1 keeps its codes and messages for the same errors', async () => {
  expect(await v1('apis.getApi', {}, ADMIN_HEADERS)).toEqual(
    v1Error(405, 'METHOD_NOT_ALLOWED', '/v1/apis.getApi does not answer POST'),
  )
  expect(await answer('GET', '/v1/apis.getApi?apiId=api_missing')).toEqual(
    v1Error(404, 'NOT_FOUND', 'api api_missing not found'),
  )
  expect(await answer('GET', '/v1/keys.getKey?keyId=key_missing')).toEqual(
    v1Error(404, 'NOT_FOUND', 'key key_missing not found'),
  )
  expect(await v1('keys.whoami', { key: 'no-such-key' })).toEqual(v1Error(404, 'NOT_FOUND', 'no key matches'))
  expect(await answer('GET', '/v1/identities.getIdentity?externalId=nobody')).toEqual(
    v1Error(404, 'NOT_FOUND', 'identity nobody not found'),
  )
  expect(await answer('GET', '/v1/identities.getIdentity')).toEqual(
    v1Error(400, 'BAD_REQUEST', 'Provide either identityId or externalId'),
  )
  expect(await answer('GET', '/v1/permissions.getRole?roleId=role_missing')).toEqual(
    v1Error(404, 'NOT_FOUND', 'role role_missing not found'),
  )
  expect(await answer('GET', '/v1/ratelimits.getOverride?namespaceName=pinned-namespace&identifier=x')).toEqual(
    v1Error(404, 'NOT_FOUND', 'Override not found'),
  )
  expect(await v1('ratelimits.deleteOverride', { namespaceName: 'pinned-namespace', identifier: 'x' })).toEqual(
    v1Error(404, 'NOT_FOUND', 'Override with x identifier not found'),
  )
  expect(await v1('rootKeys.revokeRootKey', { rootKeyId: 'root_missing' })).toEqual(
    v1Error(404, 'NOT_FOUND', 'root key root_missing not found'),
  )
  expect(await v1('keys.createKey', { apiId: 'api_x', expires: 1_700_000_000 })).toEqual(
    v1Error(400, 'BAD_REQUEST', 'expires: must be unix milliseconds (this looks like seconds)'),
  )
  const meta = { blob: 'x'.repeat(70_000) }
  expect(await v1('keys.createKey', { apiId: ids.get('<apiId>'), meta })).toEqual(
    v1Error(413, 'PAYLOAD_TOO_LARGE', 'meta: is larger than 65536 bytes'),
  )
  const twice = { name: 'twice', limit: 1, duration: 1000 }
  expect(await v1('keys.createKey', { apiId: ids.get('<apiId>'), ratelimits: [twice, twice] })).toEqual(
    v1Error(409, 'CONFLICT', 'Ratelimit with name "twice" is already defined in the request'),
  )
  expect(await v1('apis.createApi', { name: 'abc', nmae: 'x' })).toEqual(
    v1Error(400, 'BAD_REQUEST', 'nmae: is not a known field (did you mean name?)'),
  )
  expect(await v1('apis.createApi', { name: 'abc' }, JSON_ONLY)).toEqual(
    v1Error(403, 'UNAUTHORIZED', 'authorization: send a root key as `Authorization: Bearer <root key>`'),
  )
})
