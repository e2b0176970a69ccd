import { WIRE_EXAMPLES } from '../shared/wire-examples.js'
import { Type, type Static } from 'typebox'
import { clipInput } from '../shared/clip-input.js'
import { MAX_CREDITS } from '../shared/credits.js'
import { ApiError } from '../shared/errors.js'
import { frozenWithMemo, memoOf } from '../shared/frozen-memo.js'
import type { JsonEndpoint } from '../shared/http/json-endpoint.js'
import { StringEnum } from '../shared/http/schema-docs.js'
import { V2Envelope } from '../shared/http/v2-route.js'
import { parsePermissionQuery, PermissionQuerySyntaxError } from '../shared/permission-query-parser.js'
import { rateLimitId } from '../shared/ratelimit-id.js'
import type { RootKeyAuthenticator } from '../shared/root-key-authenticator.js'
import { may } from '../shared/root-key-principal.js'
import type { Verdict, VerifyRequest } from '../shared/verification.js'
import type { KeyVerifier } from './key-verifier.js'
import { UnknownLimitError, type UnknownLimit } from './unknown-limit-error.js'

/** Unkey v2's codes: FORBIDDEN is the IP allow-list's (v2 has no `apiId` to ask about). */
const V2_CODES = [
  'VALID',
  'NOT_FOUND',
  'FORBIDDEN',
  'INSUFFICIENT_PERMISSIONS',
  'USAGE_EXCEEDED',
  'RATE_LIMITED',
  'DISABLED',
  'EXPIRED',
] as const

// Unkey's V2KeysVerifyKeyRequestBody; where Keygate's engine is narrower (a limit's cost, limit and window, ten
// limits a call, as v1), the bound is v1's.
const Body = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 512, description: 'The key to verify, as your client sent it' }),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
        maxItems: 20,
        description: 'Analytics tags: accepted and not stored',
      }),
    ),
    permissions: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description:
          "What the key's permissions must satisfy: names joined by AND / OR (AND binds tighter; any case), grouped with parentheses, e.g. `documents.read AND (documents.write OR admin)`. Otherwise INSUFFICIENT_PERMISSIONS",
      }),
    ),
    credits: Type.Optional(
      Type.Object(
        {
          cost: Type.Integer({
            minimum: 0,
            maximum: MAX_CREDITS,
            description: 'Credits this verification spends, for a key with credits (0: free)',
          }),
        },
        { additionalProperties: false, description: 'What this verification costs (default 1 credit)' },
      ),
    ),
    ratelimits: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({
            minLength: 3,
            maxLength: 255,
            description: "The key's or its identity's limit of that name, or one this call defines (limit, duration)",
          }),
          cost: Type.Optional(
            Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'Units this call uses (default 1)' }),
          ),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Units allowed per window (overrides)' }),
          ),
          duration: Type.Optional(
            Type.Integer({ minimum: 1_000, maximum: 31 * 86_400_000, description: 'The window, ms (overrides)' }),
          ),
        }),
        { maxItems: 10, description: 'Rate limits for this call, beside the auto-applied ones: all or nothing' },
      ),
    ),
    migrationId: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          'Accepted and not needed: keys migrated with migrationId "sha256" are stored as every key is, and verify without it',
      }),
    ),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)

const LimitConfig = {
  id: Type.String({ description: 'The limit: its holder (key or identity) and name' }),
  name: Type.String({ description: "The limit's name" }),
  limit: Type.Integer({ description: 'Units allowed per window' }),
  duration: Type.Integer({ description: 'The window, ms' }),
  autoApply: Type.Boolean({ description: 'Applied to every call without being named' }),
}

// The allow-list of what the answer may carry (Unkey's V2KeysVerifyKeyResponseData): nothing else reaches the wire.
const Data = Type.Object({
  valid: Type.Boolean({ description: 'Whether the key may be used for this request: true only with code VALID' }),
  code: StringEnum(V2_CODES, {
    description:
      "NOT_FOUND (no such key, or one of an api the root key may not verify), DISABLED, EXPIRED, FORBIDDEN (the client's address is outside the key's or its api's IP allow-list), INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED (credits), VALID — checked in that order",
  }),
  keyId: Type.Optional(Type.String({ description: "The key's id (absent for NOT_FOUND)" })),
  name: Type.Optional(Type.String({ description: "The key's name" })),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The key's meta" })),
  expires: Type.Optional(Type.Integer({ description: 'When the key expires, unix ms' })),
  credits: Type.Optional(Type.Integer({ description: 'Credits left after this verification (keys with credits)' })),
  enabled: Type.Optional(Type.Boolean({ description: 'Whether the key is enabled' })),
  permissions: Type.Optional(Type.Array(Type.String(), { description: 'Its permissions, its roles’ included' })),
  roles: Type.Optional(Type.Array(Type.String(), { description: 'Its roles, by name' })),
  identity: Type.Optional(
    Type.Object(
      {
        id: Type.String({ description: "The identity's id" }),
        externalId: Type.String({ description: 'Its id in your system: the key’s externalId' }),
        meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
        ratelimits: Type.Optional(
          Type.Array(Type.Object(LimitConfig), { description: 'Its rate limits, shared by all its keys' }),
        ),
      },
      { description: 'The identity the key belongs to (through its externalId), when there is one' },
    ),
  ),
  ratelimits: Type.Optional(
    Type.Array(
      Type.Object({
        ...LimitConfig,
        reset: Type.Integer({ description: 'When the window ends, unix ms' }),
        remaining: Type.Integer({ description: 'Units left in this window' }),
        exceeded: Type.Boolean({ description: 'Whether this limit refused the call' }),
      }),
      { description: 'Every limit the call was checked against, in order, up to the one that refused it' },
    ),
  ),
})
type Data = Static<typeof Data>

const Response = V2Envelope(Data)

/**
 * POST /v2/keys.verifyKey, on the verifier and on the control plane alike: every call takes a root key (checked
 * before the body, as the management API's: a missing or malformed header 400, one not valid 401). A root key
 * without `api.*.verify_key` or `api.<the key's api>.verify_key` gets NOT_FOUND for the key, as a key that does not
 * exist, before anything of it is spent (Unkey's rule: it learns nothing of keys beyond its reach). Then the same
 * verification as v1's (KeyVerifier.verify), its verdict in v2's shape. One endpoint (shared/http/json-endpoint.ts),
 * served as v1's is: ahead of Fastify on a listening verifier, and as a Fastify route.
 */
export function v2VerifyKeyEndpoint(verifier: KeyVerifier, rootKeys: RootKeyAuthenticator): JsonEndpoint {
  return {
    url: '/v2/keys.verifyKey',
    bodySchema: Body,
    responseSchema: Response,
    authenticate: (authorization) => rootKeys.principalOf(authorization),
    handle(input, caller, request) {
      const body = input as Static<typeof Body>
      const conditions: VerifyRequest =
        body.permissions === undefined && body.credits === undefined && body.ratelimits === undefined
          ? NO_CONDITIONS
          : {
              permissions: body.permissions === undefined ? undefined : queryOf(body.permissions),
              cost: body.credits?.cost,
              ratelimits: body.ratelimits?.map(({ name, cost, limit, duration }) => ({ name, cost, limit, duration })),
            }
      const principal = caller!
      let verdict: Verdict | Promise<Verdict>
      try {
        const visible = (apiId: string) => may(principal, 'api', apiId, 'verify_key')
        verdict = verifier.verify(body.key, conditions, request, visible)
      } catch (err) {
        return v2Error(err)
      }
      return verdict instanceof Promise ? verdict.then(dataOf, v2Error) : dataOf(verdict)
    },
  }
}

const NO_CONDITIONS: VerifyRequest = Object.freeze({})
// A memoised verdict is the same every time it is answered (key-verifier.ts): so is its v2 data, kept in the
// verdict's memo under this symbol (and frozen with a memo of its own, for the fast path's serialisation).
const V2_DATA = Symbol('v2 data')

function v2Error(err: unknown): never {
  throw err instanceof UnknownLimitError ? unknownLimit(err.limit) : err
}

function queryOf(text: string) {
  try {
    return parsePermissionQuery(text)
  } catch (err) {
    if (!(err instanceof PermissionQuerySyntaxError)) throw err
    throw new ApiError('BAD_REQUEST', `permissions: ${err.message}`, undefined, {
      problem: 'user/bad_request/permissions_query_syntax_error',
      fields: [{ location: 'body.permissions', message: err.message }],
    })
  }
}

/** Unkey v2 answers a limit the key and its identity lack 412 (v1: 400), naming both. */
function unknownLimit({ name, keyId, identity }: UnknownLimit): ApiError {
  const holder = identity
    ? `nor identity ${identity.id} (externalId ${JSON.stringify(clipInput(identity.externalId))})`
    : 'and there is no identity connected'
  return new ApiError(
    'PRECONDITION_FAILED',
    `ratelimit '${clipInput(name)}' was requested but does not exist for key '${keyId}' ${holder}; give limit and duration to define one for this call`,
  )
}

/** The verdict in v2's shape, made once for a memoised verdict. */
function dataOf(verdict: Verdict): Data {
  const memo = memoOf(verdict)
  if (memo === undefined) return freshDataOf(verdict)
  let data = memo[V2_DATA] as Data | undefined
  if (data === undefined) memo[V2_DATA] = data = frozenWithMemo(freshDataOf(verdict))
  return data
}

/** The verdict in v2's shape: a key not found (or hidden from this root key) shows nothing but its code. */
function freshDataOf(verdict: Verdict): Data {
  const { keyId } = verdict
  if (keyId === undefined) return { valid: false, code: 'NOT_FOUND' }
  const identity = verdict.identity
  return {
    valid: verdict.valid,
    code: verdict.code,
    keyId,
    name: verdict.name,
    meta: verdict.meta,
    expires: verdict.expires,
    credits: verdict.remaining,
    enabled: verdict.enabled,
    permissions: verdict.permissions,
    roles: verdict.roles,
    identity: identity && {
      id: identity.id,
      externalId: identity.externalId,
      meta: identity.meta,
      ratelimits: identity.ratelimits?.length
        ? identity.ratelimits.map(({ name, limit, duration, autoApply }) => ({
            id: rateLimitId(identity.id, name),
            name,
            limit,
            duration,
            autoApply: autoApply === true,
          }))
        : undefined,
    },
    ratelimits: verdict.ratelimits?.map(
      ({ name, limit, duration, reset, remaining, exceeded, autoApply, ofIdentity }) => ({
        // The limit's holder: the identity for one counted across its keys, else the key.
        id: rateLimitId(ofIdentity && identity ? identity.id : keyId, name),
        name,
        limit,
        duration,
        reset,
        remaining,
        exceeded,
        autoApply,
      }),
    ),
  }
}
