import { createHash } from 'node:crypto'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from 'typebox'
import { ERRORS, type ErrorCode } from '../../shared/errors/errors.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { pageSecurityHeaders } from '../../shared/http/page-security-headers.js'
import { packageVersion } from '../../shared/package-root.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { withBodyExample } from './body-example.js'
import { withDocumentedShapes } from './documented-shapes.js'
import { TAGS, type OperationDoc } from '../../shared/http/operation-doc.js'
import { isV2Operation, OPERATIONS, operationIdOf } from './operations.js'
import { problemResponses } from './problem-responses.js'

const version = packageVersion()

/**
 * v1's error shape (rendered by shared/http/error-handler.ts), documented once for every error status with the
 * codes it carries there (403 carries two on v1: UNAUTHORIZED and INSUFFICIENT_PERMISSIONS). v2's problem bodies:
 * problem-responses.ts.
 */
const ErrorResponse = (codes: ErrorCode[], description: string) =>
  Type.Object(
    {
      error: Type.Object(
        {
          code: Type.String({ description: 'What went wrong, as a code', examples: codes }),
          message: Type.String({
            description: 'What went wrong in this request: the field and the rule, for a 400',
            examples: codes.map((code) => ERROR_EXAMPLES[code] ?? 'what went wrong'),
          }),
          docs: Type.String({
            description:
              "A link to the code's page (what it means, how to fix it): a path on this server unless DOCS_BASE_URL is set",
            examples: codes.map((code) => `/docs/errors/${code}`),
          }),
          requestId: Type.String({
            description: 'Finds the request in the logs (also the X-Request-Id header)',
            examples: [WIRE_EXAMPLES.requestId],
          }),
        },
        { description: 'The error' },
      ),
    },
    { description },
  )

/** A message of each code, for the examples. */
const ERROR_EXAMPLES: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: 'apiId: is required',
  UNAUTHORIZED: 'authorization: send a root key as `Authorization: Bearer <root key>`',
  INSUFFICIENT_PERMISSIONS: `the root key needs api.${WIRE_EXAMPLES.apiId}.create_key`,
  NOT_FOUND: `api ${WIRE_EXAMPLES.apiId} not found`,
  RATE_LIMITED: 'this root key made more than 6000 management calls in a minute; retry in 12 s',
  INTERNAL_SERVER_ERROR: 'internal error; the request id identifies it in our logs',
  UNAVAILABLE: 'the store cannot be reached; retry later',
}

/** The errors an operation can answer with, by kind, and what each means there. */
const ERROR_TEXT: Partial<Record<ErrorCode, string>> = {
  BAD_REQUEST: 'The request is malformed: `message` names the field and the rule.',
  UNAUTHORIZED: 'No root key, or not a valid one.',
  INSUFFICIENT_PERMISSIONS: 'The root key lacks the permission the operation needs.',
  NOT_FOUND: 'The api or key does not exist.',
  CONFLICT: 'A key with the same hash exists already, or a concurrent write won: nothing was written.',
  RATE_LIMITED: 'Too many management calls for this root key (Retry-After says when to retry).',
  INTERNAL_SERVER_ERROR: 'Something failed on our side (the message is not shown).',
  UNAVAILABLE: 'The store cannot be reached, the server cannot answer correctly now, or it is shutting down: retry.',
}
const MANAGEMENT_ERRORS: ErrorCode[] = [
  'BAD_REQUEST',
  'UNAUTHORIZED',
  'INSUFFICIENT_PERMISSIONS',
  'NOT_FOUND',
  'RATE_LIMITED',
  'INTERNAL_SERVER_ERROR',
  'UNAVAILABLE',
]
const PUBLIC_ERRORS: ErrorCode[] = ['BAD_REQUEST', 'INTERNAL_SERVER_ERROR', 'UNAVAILABLE']

/**
 * OpenAPI 3.1 generated from the routes' own TypeBox schemas (request and every response), served at
 * /openapi.json with Swagger UI at /docs, all under the page protections the console has: an admin pastes a root
 * key into /docs. Registered before the routes so that it sees each of them.
 */
export function registerOpenApi(app: KeygateServer): void {
  void app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Keygate API',
        version,
        description: [
          'API keys: the management API (`apis.*`, `keys.*`, `permissions.*`, `identities.*`, `ratelimits.*`, `audit.*`, `rootKeys.*`, `webhooks.*`), key verification and rate limiting. Two wire contracts over the same keys: a key made through either verifies through both.',
          "**v1** is Unkey's v1 API: `{base}/v1/{service}.{method}`, GET reads, POST writes, JSON bodies. Every error has the shape `{error: {code, message, docs, requestId}}`; `docs` links to the page of its code, listed at [/docs/errors](/docs/errors).",
          "**v2** is Unkey's v2 API, what `@unkey/api` 2.x speaks (`apis.*`, `keys.*`, `identities.*`, `permissions.*`, `ratelimit.*`): `POST {base}/v2/{service}.{method}`, every answer `{meta: {requestId}, data}` (lists add `pagination: {cursor?, hasMore}`), every error a problem body `{meta, error: {title, detail, status, type, errors?}}`. Every v2 call but liveness needs a root key, verifyKey included: a missing or malformed `Authorization` header is 400, a root key not valid 401, a missing permission 403.",
          '**Trying it out:** management operations need a root key. Press **Authorize** and paste the root key (`keygate dev` prints one). Create an api with `apis.createApi`, then put the `apiId` it returns into `keys.createKey`; the examples show ids of the right shape, which name nothing until you replace them.',
        ].join('\n\n'),
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: '/', description: 'this server' }],
      tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
      components: {
        securitySchemes: {
          rootKey: { type: 'http', scheme: 'bearer', description: 'A root key: `Authorization: Bearer <root key>`' },
        },
      },
    },
    transform: ({ schema, url }) => {
      const id = operationIdOf(url)
      const doc = id === undefined ? undefined : OPERATIONS[id]
      // Routes outside the table (the docs themselves, error pages, /v1/authorize/*) stay out of the document.
      if (!id || !doc || schema?.hide) return { schema: { ...schema, hide: true }, url }
      return { url, schema: operationSchema(id, doc, (schema ?? {}) as RouteSchema, url) }
    },
    // Forward-auth takes every method Node parses; OpenAPI can list only some: the table says which to show.
    transformObject: (document) => {
      if (!('openapiObject' in document)) return document.swaggerObject
      const { openapiObject } = document
      for (const [url, path] of Object.entries(openapiObject.paths ?? {})) {
        const methods = OPERATIONS[operationIdOf(url) ?? '']?.methods
        if (!methods || !path) continue
        const shown = new Set(methods.map((method) => method.toLowerCase()))
        for (const method of Object.keys(path)) {
          if (!shown.has(method)) delete (path as Record<string, unknown>)[method]
        }
      }
      return openapiObject
    },
  })
  // A scope of its own whose hook gives every answer in it the headers: Swagger UI's uiHooks reach its routes but not
  // the files @fastify/static serves for it.
  void app.register(async (docs: KeygateServer) => {
    docs.addHook('onRequest', async (_request, reply) => {
      void reply.headers(DOCS_HEADERS)
    })
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true } })
    docs.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  })
}

/**
 * The one inline stylesheet Swagger UI writes, inside the Swagger logo of its top bar (which the plugin swaps for its
 * own logo at once): allowed by its hash, so that no other inline style is. The browser test fails on a violation,
 * so a Swagger UI that changes it is caught there.
 */
const LOGO_STYLE = '.logo_small_svg__cls-2{fill:#fff}.logo_small_svg__cls-3{fill:#85ea2d}'

/**
 * What Swagger UI needs, from this origin only: its scripts and stylesheets, calls for "Try it out" and the document.
 * It runs no inline script and no eval. Images may also be data: URLs, as its stylesheet's icons and its logo are.
 * No Trusted Types (the console has them): it renders the document's Markdown through innerHTML, after sanitising it.
 */
const DOCS_HEADERS = pageSecurityHeaders([
  "default-src 'none'",
  "script-src 'self'",
  `style-src 'self' 'sha256-${createHash('sha256').update(LOGO_STYLE).digest('base64')}'`,
  "img-src 'self' data:",
  "connect-src 'self'",
])

interface RouteSchema {
  body?: object
  querystring?: object
  headers?: object
  response?: Record<string, object>
}

/** A route's schema as the document shows it: the table's words, its answers (errors included), its auth. */
function operationSchema(id: string, doc: OperationDoc, schema: RouteSchema, url: string) {
  const response: Record<string, unknown> = {}
  for (const [status, answer] of Object.entries(schema.response ?? {})) {
    const described = answer as { description?: string }
    response[status] = described.description === undefined ? { ...described, description: 'OK' } : described
  }
  for (const [status, answer] of Object.entries(doc.responses ?? {})) {
    response[status] = {
      description: answer.description,
      ...(answer.content
        ? { content: { [answer.content.type]: { schema: answer.content.schema } } }
        : { type: 'null' }),
      ...(answer.headers ? { headers: headerSchemas(answer.headers) } : {}),
    }
  }
  const errors = doc.errors ?? (doc.rootKey ? MANAGEMENT_ERRORS : PUBLIC_ERRORS)
  const errorResponses = isV2Operation(id) ? problemResponses(errors, doc.rootKey, url) : v1ErrorResponses(errors)
  for (const [status, answer] of Object.entries(errorResponses)) response[status] ??= answer
  return {
    ...schema,
    ...(schema.body ? { body: withBodyExample(withDocumentedShapes(schema.body)) } : {}),
    ...(doc.headers
      ? { headers: { type: 'object', properties: headerSchemas(doc.headers), additionalProperties: true } }
      : {}),
    operationId: id,
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    tags: [doc.tag],
    // An empty list says "no authentication" outright (verification is open by design).
    security: doc.rootKey ? [{ rootKey: [] }] : [],
    response,
  }
}

/** A v1 operation's error answers by status, each with the codes that status carries. */
function v1ErrorResponses(errors: readonly ErrorCode[]): Record<string, object> {
  const byStatus = new Map<string, ErrorCode[]>()
  for (const code of errors) byStatus.set(String(ERRORS[code]), [...(byStatus.get(String(ERRORS[code])) ?? []), code])
  const text = (code: ErrorCode) => ERROR_TEXT[code] ?? code
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [
      status,
      ErrorResponse(
        codes,
        codes.length === 1 ? text(codes[0]!) : codes.map((code) => `${code}: ${text(code)}`).join(' '),
      ),
    ]),
  )
}

function headerSchemas(headers: NonNullable<OperationDoc['headers']>): Record<string, object> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, header]) => [name, { type: 'string', description: header.description }]),
  )
}
