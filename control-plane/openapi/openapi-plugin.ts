import { existsSync, readFileSync } from 'node:fs'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from 'typebox'
import { ERRORS, type ErrorCode } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { OPERATIONS, operationIdOf } from './operations.js'

/** The package's version, from the package.json above this module (in dist/ or, under tests, the sources). */
function packageVersion(): string {
  for (let dir = new URL('./', import.meta.url); dir.pathname !== '/'; dir = new URL('../', dir)) {
    if (existsSync(new URL('package.json', dir)))
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version
  }
  throw new Error('package.json not found above the OpenAPI module')
}
const version = packageVersion()

/** The contract's error shape (rendered by shared/http/error-handler.ts), documented once for every error status. */
const ErrorResponse = (code: ErrorCode, description: string) =>
  Type.Object(
    {
      error: Type.Object({
        code: Type.String({ examples: [code] }),
        message: Type.String(),
        docs: Type.String({ description: 'a link to the documentation of the code' }),
        requestId: Type.String(),
      }),
    },
    { description },
  )

/** The errors any operation can answer with, and those only management calls (root key) can. */
const COMMON_ERRORS: [ErrorCode, string][] = [
  ['BAD_REQUEST', 'The request is malformed: `message` names the field and the rule.'],
  ['RATE_LIMITED', 'Too many management calls for this root key (Retry-After says when to retry).'],
  ['INTERNAL_SERVER_ERROR', 'Something failed on our side (the message is not shown).'],
  ['UNAVAILABLE', 'The store cannot be reached or the server is shutting down: retry.'],
]
const ROOT_KEY_ERRORS: [ErrorCode, string][] = [
  ['UNAUTHORIZED', 'No root key, or not a valid one.'],
  ['INSUFFICIENT_PERMISSIONS', 'The root key lacks the permission the operation needs.'],
  ['NOT_FOUND', 'The api or key does not exist.'],
]

/**
 * OpenAPI 3.1 generated from the routes' own TypeBox schemas (request and every response), served at
 * /openapi.json with Swagger UI at /docs. Registered before the routes so that it sees each of them.
 */
export function registerOpenApi(app: KeygateServer): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Keygate API',
        version,
        description:
          "API keys: the management API (apis.*, keys.*, audit.*) and key verification. The wire contract is Unkey's v1 API: `{base}/v1/{service}.{method}`, GET reads, POST writes, JSON bodies. Every error has the shape `{error: {code, message, docs, requestId}}`.",
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'this server' }],
      tags: [
        { name: 'apis', description: 'Apis: namespaces that keys belong to' },
        { name: 'keys', description: 'Keys: create, change, verify' },
        { name: 'audit', description: 'The audit log of management writes' },
        { name: 'health', description: 'Whether the service is up' },
      ],
      components: {
        securitySchemes: {
          rootKey: { type: 'http', scheme: 'bearer', description: 'A root key: `Authorization: Bearer <root key>`' },
        },
      },
    },
    transform: ({ schema, url }) => {
      const id = operationIdOf(url)
      const doc = id === undefined ? undefined : OPERATIONS[id]
      // Routes outside the table (health probes, metrics) stay out of the API document.
      if (!id || !doc || !schema || schema.hide) return { schema: { ...schema, hide: true }, url }
      const errors = doc.rootKey
        ? [...ROOT_KEY_ERRORS, ...COMMON_ERRORS]
        : COMMON_ERRORS.filter(([code]) => code !== 'RATE_LIMITED')
      const response: Record<string, unknown> = { ...(schema.response as object) }
      for (const status of Object.keys(response)) {
        const described = response[status] as { description?: string }
        if (described.description === undefined)
          response[status] = { ...described, description: status === '200' ? 'OK' : `HTTP ${status}` }
      }
      for (const [code, description] of errors) response[String(ERRORS[code])] ??= ErrorResponse(code, description)
      return {
        url,
        schema: {
          ...schema,
          operationId: id,
          summary: doc.summary,
          tags: [id.includes('.') ? id.split('.')[0]! : 'health'],
          // An empty list says "no authentication" outright (verification is open by design).
          security: doc.rootKey ? [{ rootKey: [] }] : [],
          response,
        },
      }
    },
  })
  void app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
}
