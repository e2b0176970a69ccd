import { Type, type Static } from 'typebox'
import type { FastJsonRoute } from '../shared/http/fast-route.js'
import { badRequest } from '../shared/errors.js'
import { queryProblem, type PermissionQuery } from '../shared/permission-query.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import type { KeyVerifier } from './key-verifier.js'
import type { VerifyRequest } from '../shared/verification.js'

const Body = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 1024 }),
    apiId: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    tags: Type.Optional(Type.Array(Type.String({ maxLength: 128 }), { maxItems: 10 })),
    // The query's shape is recursive: checked (with limits) by queryProblem rather than by the schema.
    authorization: Type.Optional(
      Type.Object({ permissions: Type.Optional(Type.Unknown()) }, { additionalProperties: false }),
    ),
    remaining: Type.Optional(
      Type.Object(
        { cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) },
        { additionalProperties: false },
      ),
    ),
    /** Unkey's deprecated form: the cost for the key's own limit. */
    ratelimit: Type.Optional(
      Type.Object(
        { cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })) },
        { additionalProperties: false },
      ),
    ),
    ratelimits: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:-]+$' }),
            cost: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
            duration: Type.Optional(Type.Integer({ minimum: 1_000, maximum: 31 * 86_400_000 })),
            async: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        { maxItems: 10 },
      ),
    ),
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
  ratelimit: Type.Optional(Type.Object({ limit: Type.Integer(), remaining: Type.Integer(), reset: Type.Number() })),
  requestId: Type.String(),
})

/**
 * POST /v1/keys.verifyKey: no root key. Always 200 for a well-formed request, valid or not; a failed
 * verification is data, not an error. Registered on Fastify (inject, and the control plane) and, on the
 * verifier, also served ahead of it (verifyKeyFastRoute): both answer through answerVerifyKey.
 */
export function registerVerifyKey(app: KeygateServer, verifier: KeyVerifier): void {
  // Its latency is keygate_http_request_duration_seconds{route="/v1/keys.verifyKey"}: one histogram per request.
  app.post(
    '/v1/keys.verifyKey',
    {
      schema: { body: Body, response: { 200: Response } },
    },
    async (request) => answerVerifyKey(verifier, request.body, request.id),
  )
}

/** The route for the verifier's listening server (shared/http/fast-route.ts). */
export function verifyKeyFastRoute(verifier: KeyVerifier): FastJsonRoute {
  return {
    url: '/v1/keys.verifyKey',
    bodySchema: Body,
    responseSchema: Response,
    handle: (body, requestId) => answerVerifyKey(verifier, body as Static<typeof Body>, requestId),
  }
}

const NO_CONDITIONS: VerifyRequest = Object.freeze({})

/** A validated body → the answer: synchronous on a cache hit. */
function answerVerifyKey(
  verifier: KeyVerifier,
  body: Static<typeof Body>,
  requestId: string,
): Static<typeof Response> | Promise<Static<typeof Response>> {
  const ratelimits = body.ratelimits?.map((limit, i) => {
    if (limit.limit === undefined || limit.duration === undefined) {
      throw badRequest(`ratelimits.${i}: needs limit and duration (limits stored on keys by name are not supported)`)
    }
    if (limit.name === 'key') throw badRequest(`ratelimits.${i}.name: "key" is the key's own limit`)
    return { name: limit.name, limit: limit.limit, duration: limit.duration, cost: limit.cost ?? 1, async: limit.async }
  })
  const query = body.authorization?.permissions
  if (query !== undefined) {
    const problem = queryProblem(query)
    if (problem) throw badRequest(`authorization.permissions: ${problem}`)
  }
  // Most requests carry only the key: no conditions object is built for them.
  const conditions =
    body.apiId === undefined &&
    query === undefined &&
    body.remaining === undefined &&
    ratelimits === undefined &&
    body.ratelimit === undefined
      ? NO_CONDITIONS
      : {
          apiId: body.apiId,
          permissions: query as PermissionQuery | undefined,
          cost: body.remaining?.cost,
          ratelimits,
          keyLimitCost: body.ratelimit?.cost,
        }
  const verdict = verifier.verify(body.key, conditions)
  return verdict instanceof Promise ? verdict.then((v) => ({ ...v, requestId })) : { ...verdict, requestId }
}
