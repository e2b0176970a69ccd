import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isV2Operation, OPERATIONS, operationPath } from '../../control-plane/openapi/operations.js'
import { VERDICT_CODES } from '../../shared/verification/verification.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'

interface Parameter {
  name: string
  in: string
  required: boolean
  description?: string
  example?: unknown
}
interface Operation {
  operationId: string
  tags: string[]
  security: Record<string, string[]>[]
  parameters?: Parameter[]
  requestBody?: { content: { 'application/json': { schema: object; example?: unknown } } }
  responses: Record<string, { content?: Record<string, { schema: object }> }>
}
interface Document {
  openapi: string
  info: { description: string }
  tags: { name: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Schema> }
}
interface Schema {
  description?: string
  properties?: Record<string, Schema>
  items?: Schema
  anyOf?: Schema[]
  allOf?: Schema[]
  additionalProperties?: Schema | boolean
  enum?: unknown[]
  $ref?: string
}

let server: TestServer
let doc: Document
// The embedded analytics engine, as `keygate dev` has it: the analytics examples run.
const analyticsDirectory = mkdtempSync(join(tmpdir(), 'keygate-openapi-analytics-'))
let analyticsEngine: ChdbEngine
const operations = new Map<string, { method: string; path: string; op: Operation }>()

beforeAll(async () => {
  // With forward-auth, as `keygate dev` has it: every operation of the table is served. Every webhook endpoint's host
  // is this machine, which the policy allows: the examples' endpoints are made, and nothing is sent beyond it.
  analyticsEngine = new ChdbEngine(analyticsDirectory, { temporary: true })
  await ensureAnalyticsSchema(analyticsEngine)
  server = await startTestControlPlane({
    gateway: {},
    hostLookup: async () => [{ address: '127.0.0.1', family: 4 }],
    webhookPolicy: { allowPrivateAddresses: true },
    analytics: { engine: analyticsEngine, holder: 'openapi' },
  })
  const response = await server.app.inject({ method: 'GET', url: '/openapi.json' })
  expect(response.statusCode).toBe(200)
  doc = response.json()
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) operations.set(op.operationId, { method, path, op })
  }
})
afterAll(async () => {
  await server.close()
  await analyticsEngine?.close()
})

function call(method: string, url: string, payload?: unknown) {
  return server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
    ...(payload === undefined ? {} : { payload: payload as object }),
  })
}

/**
 * The documented schema of an answer, as a validator (OpenAPI 3.1 schemas are JSON Schema 2020-12), under the
 * content type it is documented with.
 */
function documented(operationId: string, status: number, contentType = 'application/json') {
  const schema = operations.get(operationId)?.op.responses[String(status)]?.content?.[contentType]?.schema
  if (!schema) throw new Error(`${operationId} documents no ${status} as ${contentType}`)
  return new Ajv2020({ strict: false }).compile(schema)
}

/** The operation ids of the table, and whether each is served (the document lists only routes the server has). */
const notServed = () => Object.keys(OPERATIONS).filter((id) => !operations.has(id))

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and documents every route of the server, probes, metrics and forward-auth included, and nothing else', () => {
    expect(doc.openapi).toBe('3.1.0')
    const routes = new Set<string>()
    const byPath = new Map(Object.entries(OPERATIONS).map(([id, operation]) => [operationPath(id), operation]))
    // Top-level routes only: nested ones are Swagger UI's own files, the error pages and /v1/authorize/<path>. With
    // a route at / the others are printed as its children, one level in and without their leading slash.
    for (const line of server.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const match = /^(?:[├└]── \/| {4}[├└]── )([^ ]*) \(([A-Z, -]+)\)$/.exec(line)
      if (!match) continue
      const route = [match[0], `/${match[1]}`, match[2]]
      // The document, the docs, the admin console (console-route.test.ts) and the portal's page
      // (portal-page-route.test.ts) are pages, not operations.
      if (['/openapi.json', '/docs', '/console', '/portal'].includes(route[1]!)) continue
      const shown = byPath.get(route[1]!)
      for (const method of route[2]!.split(', ')) {
        // Forward-auth takes every method; the document shows the ones the table names.
        if (method !== 'HEAD' && (!shown?.methods || shown.methods.includes(method)))
          routes.add(`${method.toLowerCase()} ${route[1]}`)
      }
    }
    const documentedRoutes = [...operations.values()].map(({ method, path }) => `${method} ${path}`)
    expect(routes).toContain('get /livez')
    expect(routes).toContain('get /readyz')
    expect(routes).toContain('get /metrics')
    expect(routes).toContain('get /v1/authorize')
    expect(routes).toContain('get /')
    expect(routes.size).toBeGreaterThan(25)
    const undocumented = [...routes].filter((route) => !documentedRoutes.includes(route))
    expect(
      undocumented,
      'served routes without an entry in OPERATIONS (control-plane/openapi/operations.ts, v2-operations.ts)',
    ).toEqual([])
    expect(new Set(documentedRoutes)).toEqual(routes)
    // Every operation that takes input documents its 400 (Redocly's 4xx rule is off for the probes' sake).
    for (const [id, { op }] of operations) {
      if (op.requestBody || op.parameters?.some((p) => p.in === 'query')) expect(op.responses, id).toHaveProperty('400')
    }
  })

  // The other half of the equality: an entry whose route is gone (or not written yet) fails here, by name.
  it('has no entry of OPERATIONS without a route on the server', () => {
    expect(notServed(), 'entries of OPERATIONS that no served route has').toEqual([])
  })

  it('documents both wire formats: one operation id per version and route, v2 under tags of its own', () => {
    expect(operations.get('apis.createApi')).toMatchObject({ method: 'post', path: '/v1/apis.createApi' })
    expect(operations.get('v2.apis.createApi')).toMatchObject({ method: 'post', path: '/v2/apis.createApi' })
    expect(operations.get('v2.liveness')).toMatchObject({ method: 'get', path: '/v2/liveness' })
    const declared = new Set(doc.tags.map((tag) => tag.name))
    for (const [id, { path, op }] of operations) {
      expect(op.tags, id).toHaveLength(1)
      expect(declared, `${id}'s tag`).toContain(op.tags[0])
      expect(path.startsWith('/v2/'), id).toBe(isV2Operation(id))
      expect(op.tags[0]!.startsWith('v2 '), `${id} is tagged ${op.tags[0]}`).toBe(isV2Operation(id))
    }
    // The table itself, served or not yet: every v2 operation but liveness and the portal's session routes (which take
    // its cookie) takes a root key, verifyKey included.
    const v2 = Object.entries(OPERATIONS).filter(([id]) => isV2Operation(id))
    expect(v2.filter(([id, entry]) => !entry.rootKey && !id.startsWith('v2.portal.')).map(([id]) => id)).toEqual([
      'v2.liveness',
    ])
    expect(v2.filter(([id, entry]) => !entry.rootKey && id.startsWith('v2.portal.'))).toHaveLength(9)
    expect(v2.length).toBe(60)
  })

  it("documents v2's errors as problem bodies: application/json, 429 as application/problem+json, v2's auth statuses", () => {
    let checked = 0
    for (const [id, { op }] of operations) {
      if (!isV2Operation(id) || op.security.length === 0) continue
      checked++
      for (const status of ['400', '401', '500']) expect(op.responses, id).toHaveProperty(status)
      for (const [status, answer] of Object.entries(op.responses)) {
        if (status === '200') continue
        // deleteIdentity's errors are all problem+json: Unkey's SDK reads them only so.
        const problemJson = status === '429' || id === 'v2.identities.deleteIdentity'
        const type = problemJson ? 'application/problem+json' : 'application/json'
        expect(Object.keys(answer.content ?? {}), `${id} ${status}`).toEqual([type])
        const schema = answer.content![type]!.schema as Schema
        expect(Object.keys(schema.properties!), `${id} ${status}`).toEqual(['meta', 'error'])
        const error = Object.keys(schema.properties!.error!.properties!)
        expect(error, `${id} ${status}`).toEqual(
          status === '400' ? ['title', 'detail', 'status', 'type', 'errors'] : ['title', 'detail', 'status', 'type'],
        )
      }
      // Missing or malformed Authorization (400) is told apart from a root key not valid (401).
      expect(JSON.stringify(op.responses['400'])).toContain('authentication/missing')
      expect(JSON.stringify(op.responses['401'])).toContain('authentication/key_not_found')
    }
    expect(checked).toBeGreaterThan(0)
    expect(Object.keys(operations.get('v2.apis.getApi')!.op.responses)).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '429',
      '500',
      '503',
    ])
  })

  it('describes every field of every request and answer', () => {
    const missing: string[] = []
    const walk = (schema: Schema | undefined, at: string) => {
      if (!schema || schema.$ref) return
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (!property.description) missing.push(`${at}.${name}`)
        walk(property, `${at}.${name}`)
      }
      walk(schema.items, `${at}[]`)
      for (const branch of [...(schema.anyOf ?? []), ...(schema.allOf ?? [])]) walk(branch, at)
      if (typeof schema.additionalProperties === 'object') walk(schema.additionalProperties, `${at}.*`)
    }
    let fields = 0
    for (const [id, { op }] of operations) {
      for (const parameter of op.parameters ?? []) {
        fields++
        if (!parameter.description) missing.push(`${id} ${parameter.in} ${parameter.name}`)
      }
      walk(op.requestBody?.content['application/json'].schema, `${id} body`)
      for (const [status, answer] of Object.entries(op.responses))
        walk(answer.content?.['application/json']?.schema, `${id} ${status}`)
    }
    for (const [name, component] of Object.entries(doc.components.schemas)) walk(component, `components.${name}`)
    expect(missing).toEqual([])
    expect(fields).toBeGreaterThan(10)
  })

  it("lists verifyKey's codes, and shows the shape of authorization.permissions (not {})", () => {
    const verify = operations.get('keys.verifyKey')!.op
    const answer = verify.responses['200']!.content!['application/json']!.schema as Schema
    expect(answer.properties!.code!.enum).toEqual([...VERDICT_CODES])
    const body = verify.requestBody!.content['application/json'].schema as Schema
    const permissions = body.properties!.authorization!.properties!.permissions!
    const shape = doc.components.schemas[permissions.allOf![0]!.$ref!.split('/').pop()!]!
    expect(shape.anyOf!.map((branch) => Object.keys(branch.properties ?? { name: 1 })[0])).toEqual([
      'name',
      'and',
      'or',
    ])
    expect(operations.get('keys.updateRemaining')!.op.requestBody!.content['application/json'].schema).toMatchObject({
      properties: { op: { enum: ['increment', 'decrement', 'set'] } },
    })
  })

  it('says in its header which services it covers, as code (Markdown would eat the asterisks), in both versions', () => {
    expect(doc.info.description).toContain(
      '(`apis.*`, `keys.*`, `permissions.*`, `identities.*`, `ratelimits.*`, `audit.*`, `rootKeys.*`, `webhooks.*`)',
    )
    expect(doc.info.description).toContain('`{base}/v1/{service}.{method}`')
    expect(doc.info.description).toContain('`POST {base}/v2/{service}.{method}`')
    expect(doc.info.description).toContain('(`apis.*`, `keys.*`, `identities.*`, `permissions.*`, `ratelimit.*`)')
  })

  it('gives examples that succeed when tried, once their ids are ones that exist', async () => {
    const tried: string[] = []
    let portals = 0
    for (const [id, { method, path, op }] of operations) {
      // The portal's session routes take a cookie, never the root key this test sends: portal-routes.test.ts.
      if (id.startsWith('v2.portal.') && OPERATIONS[id]?.rootKey === false) continue
      // Fresh for each operation: a delete or a reroll must not spoil the next one.
      const apiId = (await call('POST', '/v1/apis.createApi', { name: 'examples' })).json().apiId
      const { keyId, key } = (await call('POST', '/v1/keys.createKey', { apiId, remaining: 10 })).json()
      const { rootKeyId } = (
        await call('POST', '/v1/rootKeys.createRootKey', { permissions: ['api.*.read_key'] })
      ).json()
      const { permissionId } = (
        await call('POST', '/v1/permissions.createPermission', { name: `examples.${apiId}` })
      ).json()
      const { roleId } = (await call('POST', '/v1/permissions.createRole', { name: `examples-${apiId}` })).json()
      // A namespace of its own with an override for the examples' identifier, so that deleting it spoils no other.
      const namespaceName = `examples.${apiId}`
      const identifier = 'user_123'
      expect(
        (await call('POST', '/v1/ratelimits.setOverride', { namespaceName, identifier, limit: 5, duration: 60_000 }))
          .statusCode,
      ).toBe(200)
      const { identityId } = (
        await call('POST', '/v1/identities.createIdentity', { externalId: `examples-${apiId}` })
      ).json()
      // An endpoint only for the operations that name one: there may be no more than MAX_WEBHOOK_ENDPOINTS.
      const namesEndpoint = JSON.stringify(op).includes(WIRE_EXAMPLES.webhookEndpointId)
      const endpointId = namesEndpoint
        ? (await call('POST', '/v1/webhooks.createEndpoint', { url: WIRE_EXAMPLES.webhookUrl })).json().endpointId
        : WIRE_EXAMPLES.webhookEndpointId
      // A portal (and a session of it) only for the operations that name one.
      const namesPortal = [WIRE_EXAMPLES.portalSlug, WIRE_EXAMPLES.portalSessionId].some((name) =>
        JSON.stringify(op).includes(name),
      )
      const portalSlug = namesPortal ? `examples-${++portals}` : WIRE_EXAMPLES.portalSlug
      let sessionId: string = WIRE_EXAMPLES.portalSessionId
      if (namesPortal) {
        expect(
          (await call('POST', '/v2/portal.createPortal', { slug: portalSlug, name: 'x', apiIds: [apiId] })).statusCode,
        ).toBe(200)
        sessionId = (
          await call('POST', '/v2/portal.createSession', { portal: portalSlug, externalId: 'u', scopes: ['keys:read'] })
        ).json().data.id
      }
      const real = (value: unknown) =>
        JSON.parse(
          JSON.stringify(value)
            .replaceAll(WIRE_EXAMPLES.apiId, apiId)
            .replaceAll(WIRE_EXAMPLES.keyId, keyId)
            .replaceAll(WIRE_EXAMPLES.key, key)
            .replaceAll(WIRE_EXAMPLES.rootKeyId, rootKeyId)
            .replaceAll(WIRE_EXAMPLES.permissionId, permissionId)
            .replaceAll(WIRE_EXAMPLES.roleId, roleId)
            .replaceAll(WIRE_EXAMPLES.namespaceName, namespaceName)
            .replaceAll(WIRE_EXAMPLES.identityId, identityId)
            .replaceAll(WIRE_EXAMPLES.webhookEndpointId, endpointId)
            .replaceAll(WIRE_EXAMPLES.portalSessionId, sessionId)
            .replaceAll(`"${WIRE_EXAMPLES.portalSlug}"`, `"${portalSlug}"`),
        )
      const parameters = (op.parameters ?? []).filter((p) => p.in === 'query')
      const body = op.requestBody?.content['application/json']
      if (!body && parameters.length === 0) continue
      if (body) expect(body.example, `${id} has no example body`).toBeDefined()
      for (const parameter of parameters.filter((p) => p.required))
        expect(parameter.example, `${id} ${parameter.name} has no example`).toBeDefined()
      const query = new URLSearchParams(
        parameters.filter((p) => p.example !== undefined).map((p): [string, string] => [p.name, String(p.example)]),
      )
      const url = `${path}${query.size > 0 ? `?${query.toString()}` : ''}`
      // As printed, the ids name nothing: at worst a 404, never a refusal of the example itself. A create of a
      // record with a unique name (a permission, an identity) may find it made already, by the other version's
      // example of the same operation: a 409, which only an operation that documents it may answer.
      const asPrinted = await call(method.toUpperCase(), url, body?.example)
      const exists = asPrinted.statusCode === 409 && '409' in op.responses
      expect([200, 404], `${id} as printed: ${asPrinted.body}`).toContain(exists ? 200 : asPrinted.statusCode)
      const answer = await call(method.toUpperCase(), real(url), body && real(body.example))
      // A record with a unique name that the printed example just created (or found) exists now.
      const createdAsPrinted = (asPrinted.statusCode === 200 || exists) && answer.statusCode === 409
      expect(createdAsPrinted ? 200 : answer.statusCode, `${id}: ${answer.body}`).toBe(200)
      tried.push(id)
    }
    expect(tried).toContain('apis.createApi')
    expect(tried).toContain('keys.createKey')
    expect(tried).toContain('webhooks.rotateSecret')
    expect(tried.length).toBeGreaterThan(20)
  })

  it('says which operations need a root key', () => {
    expect(operations.get('keys.createKey')!.op.security).toEqual([{ rootKey: [] }])
    expect(operations.get('audit.list')!.op.security).toEqual([{ rootKey: [] }])
    expect(operations.get('keys.verifyKey')!.op.security).toEqual([])
    expect(operations.get('v2.apis.createApi')!.op.security).toEqual([{ rootKey: [] }])
    expect(operations.get('v2.liveness')!.op.security).toEqual([])
  })

  it('describes the answers the server really gives, errors included', async () => {
    const created = await server.app.inject({
      method: 'POST',
      url: '/v1/apis.createApi',
      headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      payload: { name: 'docs' },
    })
    expect(created.statusCode).toBe(200)
    const ok = documented('apis.createApi', 200)
    expect(ok(created.json())).toBe(true)
    const key = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.createKey',
      headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      payload: { apiId: created.json().apiId },
    })
    const verified = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.verifyKey',
      payload: { key: key.json().key },
    })
    expect(documented('keys.verifyKey', 200)(verified.json())).toBe(true)
    const unauthorized = await server.app.inject({
      method: 'POST',
      url: '/v1/keys.createKey',
      payload: { apiId: 'api_x' },
    })
    expect(unauthorized.statusCode).toBe(403)
    expect(documented('keys.createKey', 403)(unauthorized.json())).toBe(true)
    const bad = await server.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key: '' } })
    expect(bad.statusCode).toBe(400)
    expect(documented('keys.verifyKey', 400)(bad.json())).toBe(true)
    // And the documented schema is not a formality: an answer of another shape fails it.
    expect(ok({ apiId: 1 })).toBe(false)
  })

  it("describes v2's answers as the server gives them: the envelope, and problem bodies under their content types", async () => {
    const v2 = (url: string, payload: object, authorization?: string) =>
      server.app.inject({
        method: 'POST',
        url,
        headers: authorization === undefined ? {} : { authorization },
        payload,
      })
    const created = await v2('/v2/apis.createApi', { name: 'docs v2' }, `Bearer ${TEST_ROOT_KEY}`)
    expect(created.statusCode).toBe(200)
    expect(documented('v2.apis.createApi', 200)(created.json())).toBe(true)
    const read = await v2('/v2/apis.getApi', { apiId: created.json().data.apiId }, `Bearer ${TEST_ROOT_KEY}`)
    expect(documented('v2.apis.getApi', 200)(read.json())).toBe(true)
    const { key } = (
      await call('POST', '/v1/rootKeys.createRootKey', { name: 'docs', permissions: ['api.*.read_key'] })
    ).json()
    const answers = [
      [400, await v2('/v2/apis.getApi', { apiId: 'api_x' })],
      [400, await v2('/v2/apis.getApi', { apiId: 'api_x' }, 'Basic x')],
      [400, await v2('/v2/apis.getApi', { apiid: 'api_x' }, `Bearer ${TEST_ROOT_KEY}`)],
      [401, await v2('/v2/apis.getApi', { apiId: 'api_x' }, 'Bearer unknown')],
      [403, await v2('/v2/apis.getApi', { apiId: 'api_x' }, `Bearer ${key}`)],
      [404, await v2('/v2/apis.getApi', { apiId: 'api_missing' }, `Bearer ${TEST_ROOT_KEY}`)],
    ] as const
    for (const [status, answer] of answers) {
      expect(answer.statusCode, answer.body).toBe(status)
      expect(answer.headers['content-type']).toMatch(/^application\/json/)
      const valid = documented('v2.apis.getApi', status)
      expect(valid(answer.json()), `${status}: ${answer.body} ${JSON.stringify(valid.errors)}`).toBe(true)
    }
    // A problem body is not a v1 error, nor another status's problem.
    expect(documented('v2.apis.getApi', 400)({ error: { code: 'BAD_REQUEST', message: 'x' } })).toBe(false)
    expect(documented('v2.apis.getApi', 401)(answers[4][1].json())).toBe(false)

    // 429 is application/problem+json, as documented (a server that allows one management call a minute).
    const limited = await startTestControlPlane({ managementRateLimit: 1 })
    try {
      const first = await limited.app.inject({
        method: 'POST',
        url: '/v2/apis.createApi',
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload: { name: 'first' },
      })
      expect(first.statusCode).toBe(200)
      const second = await limited.app.inject({
        method: 'POST',
        url: '/v2/apis.createApi',
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload: { name: 'second' },
      })
      expect(second.statusCode).toBe(429)
      expect(second.headers['content-type']).toMatch(/^application\/problem\+json/)
      expect(documented('v2.apis.createApi', 429, 'application/problem+json')(second.json())).toBe(true)
    } finally {
      await limited.close()
    }
  })

  it('documents request bodies with the limits the server enforces', () => {
    const body = operations.get('keys.verifyKey')!.op.requestBody!.content['application/json'].schema as {
      required: string[]
      properties: { key: { maxLength: number } }
    }
    expect(body.required).toEqual(['key'])
    expect(body.properties.key.maxLength).toBe(1024)
  })

  it("passes Redocly's recommended lint", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'keygate-openapi-')), 'openapi.json')
    writeFileSync(file, JSON.stringify(doc, null, 2))
    const redocly = join(process.cwd(), 'node_modules', '.bin', 'redocly')
    const run = await promisify(execFile)(redocly, ['lint', '--config', 'redocly.yaml', '--format', 'summary', file], {
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
    }).catch((err: { code: number; stdout: string; stderr: string }) => err)
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/error/i)
    expect('code' in run ? run.code : 0).toBe(0)
  }, 60_000)

  it('serves Swagger UI at /docs without a root key', async () => {
    const page = await server.app.inject({ method: 'GET', url: '/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/text\/html/)
    expect(page.body).toContain('swagger')
  })
})
