import { Type, type Static } from 'typebox'
import type { OperationDoc } from '../http/operation-doc.js'
import { StringEnum } from '../http/schema-docs.js'
import { MAX_CREDITS } from '../keys/credits.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'

/**
 * v2's keys.verifyKey (Unkey's v2), whole: what the API reference says of it, its body and its answer (the `data`
 * of v2's envelope). Served by the verifier (verifier/v2-verify-key-route.ts) and by the control plane, from this
 * one definition; control-plane/openapi/v2-operations.ts documents it from here.
 */
export const V2_VERIFY_KEY_DOC: OperationDoc = {
  summary: 'Verify a key (200 for a well-formed request: `valid` and `code` say the verdict)',
  description:
    'What your API calls, usually on the verifier sidecar. Needs a root key with `api.*.verify_key` or `api.<apiId>.verify_key`; a root key without it learns nothing about the key: the answer is `valid: false` with `code: NOT_FOUND`, as Unkey answers. A key that does not verify is an answer, not an error.',
  rootKey: true,
  tag: 'v2 keys',
  // Served beside the management API, not in it: no management rate limit (a key's own limits are verdicts).
  errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'INTERNAL_SERVER_ERROR', 'UNAVAILABLE'],
}

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

/**
 * The request body: Unkey's V2KeysVerifyKeyRequestBody; where Keygate's engine is narrower (a limit's cost, limit
 * and window, ten limits a call, as v1), the bound is v1's.
 */
export const V2VerifyKeyBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: 512, description: 'The key to verify, as your client sent it' }),
    tags: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 512 }), {
        maxItems: 20,
        description: 'Analytics tags, recorded with the verification (`tags` in key_verifications_v1)',
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

/** The answer's `data`: the allow-list of what it may carry (Unkey's V2KeysVerifyKeyResponseData), nothing else. */
export const V2VerifyKeyData = Type.Object({
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
export type V2VerifyKeyData = Static<typeof V2VerifyKeyData>

export type V2VerifyKeyBodyInput = Static<typeof V2VerifyKeyBody>
