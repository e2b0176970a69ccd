import { execFile } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { OPERATIONS } from '../../control-plane/openapi/operations.js'
import { startTestControlPlane, TEST_ROOT_KEY, type TestServer } from '../support/apps.js'

interface Operation {
  operationId: string
  security: Record<string, string[]>[]
  requestBody?: { content: { 'application/json': { schema: object } } }
  responses: Record<string, { content?: { 'application/json': { schema: object } } }>
}
interface Document {
  openapi: string
  paths: Record<string, Record<string, Operation>>
}

let server: TestServer
let doc: Document
const operations = new Map<string, { method: string; path: string; op: Operation }>()

beforeAll(async () => {
  server = await startTestControlPlane()
  const response = await server.app.inject({ method: 'GET', url: '/openapi.json' })
  expect(response.statusCode).toBe(200)
  doc = response.json()
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) operations.set(op.operationId, { method, path, op })
  }
})
afterAll(async () => {
  await server.close()
})

/** The documented schema of an answer, as a validator (OpenAPI 3.1 schemas are JSON Schema 2020-12). */
function documented(operationId: string, status: number) {
  const schema = operations.get(operationId)?.op.responses[String(status)]?.content?.['application/json'].schema
  if (!schema) throw new Error(`${operationId} documents no ${status}`)
  return new Ajv2020({ strict: false }).compile(schema)
}

describe('OpenAPI document', () => {
  it('is OpenAPI 3.1 and documents every /v1 route of the server, and nothing else', () => {
    expect(doc.openapi).toBe('3.1.0')
    const routes = new Set<string>()
    for (const line of server.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const url = /(\/v1\/[A-Za-z.]+) \(([A-Z, ]+)\)/.exec(line)
      if (url)
        for (const method of url[2]!.split(', ')) if (method !== 'HEAD') routes.add(`${method.toLowerCase()} ${url[1]}`)
    }
    const documentedRoutes = [...operations.values()].map(({ method, path }) => `${method} ${path}`)
    expect(routes.size).toBeGreaterThan(20)
    expect(new Set(documentedRoutes)).toEqual(routes)
    expect([...operations.keys()].sort()).toEqual(Object.keys(OPERATIONS).sort())
  })

  it('says which operations need a root key', () => {
    expect(operations.get('keys.createKey')!.op.security).toEqual([{ rootKey: [] }])
    expect(operations.get('audit.list')!.op.security).toEqual([{ rootKey: [] }])
    expect(operations.get('keys.verifyKey')!.op.security).toEqual([])
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
    expect(unauthorized.statusCode).toBe(401)
    expect(documented('keys.createKey', 401)(unauthorized.json())).toBe(true)
    const bad = await server.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key: '' } })
    expect(bad.statusCode).toBe(400)
    expect(documented('keys.verifyKey', 400)(bad.json())).toBe(true)
    // And the documented schema is not a formality: an answer of another shape fails it.
    expect(ok({ apiId: 1 })).toBe(false)
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
