import { Type } from 'typebox'
import { badRequest } from '../shared/errors.js'
import { queryProblem, type PermissionQuery } from '../shared/permission-query.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { KeyVerifier } from './key-verifier.js'

// Unkey v1 request fields implemented by a later Keygate version: known, but refused until then.
const NOT_YET_SUPPORTED = ['ratelimit', 'ratelimits'] as const

const Body = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    apiId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 10 })),
    // The query's shape is recursive: checked (with limits) by queryProblem rather than by the schema.
    authorization: Type.Optional(Type.Object({ permissions: Type.Optional(Type.Unknown()) }, { additionalProperties: false })),
    remaining: Type.Optional(Type.Object({ cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) }, { additionalProperties: false })),
    ...Object.fromEntries(NOT_YET_SUPPORTED.map((field) => [field, Type.Optional(Type.Unknown())])),
  },
  { additionalProperties: false },
)

const Response = Type.Object({
  keyId: Type.Optional(Type.String()),
  valid: Type.Boolean(),
  code: Type.String(),
  name: Type.Optional(Type.String()),
  ownerId: Type.Optional(Type.String()),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  expires: Type.Optional(Type.Number()),
  enabled: Type.Optional(Type.Boolean()),
  environment: Type.Optional(Type.String()),
  permissions: Type.Optional(Type.Array(Type.String())),
  roles: Type.Optional(Type.Array(Type.String())),
  remaining: Type.Optional(Type.Integer()),
  requestId: Type.String(),
})

/**
 * POST /v1/keys.verifyKey: no root key. Always 200 for a well-formed request, valid or not; a failed
 * verification is data, not an error.
 */
export function registerVerifyKey(app: KeygateServer, verifier: KeyVerifier): void {
  const duration = verifier.metrics.verifyDuration
  app.post('/v1/keys.verifyKey', {
    schema: { body: Body, response: { 200: Response } },
    onResponse: (_request, reply, done) => {
      duration.observe(reply.elapsedTime / 1000)
      done()
    },
  }, async (request) => {
    const body = request.body
    for (const field of NOT_YET_SUPPORTED) {
      if ((body as Record<string, unknown>)[field] !== undefined) throw badRequest(`${field}: is not supported by this Keygate version yet`)
    }
    const query = body.authorization?.permissions
    if (query !== undefined) {
      const problem = queryProblem(query)
      if (problem) throw badRequest(`authorization.permissions: ${problem}`)
    }
    const verdict = await verifier.verify(body.key, { apiId: body.apiId, permissions: query as PermissionQuery | undefined, cost: body.remaining?.cost })
    return { ...verdict, requestId: request.id }
  })
}
