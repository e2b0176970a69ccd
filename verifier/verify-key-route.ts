import { Type } from 'typebox'
import { badRequest } from '../shared/errors.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { KeyVerifier } from './key-verifier.js'

// Unkey v1 request fields implemented by a later Keygate version: known, but refused until then.
const NOT_YET_SUPPORTED = ['authorization', 'remaining', 'ratelimit', 'ratelimits'] as const

const Body = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    apiId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 10 })),
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
    const verdict = await verifier.verify(body.key, { apiId: body.apiId })
    return { ...verdict, requestId: request.id }
  })
}
