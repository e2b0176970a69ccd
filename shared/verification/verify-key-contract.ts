import { Type, type Static } from 'typebox'
import type { OperationDoc } from '../http/operation-doc.js'
import { documentedAs, StringEnum } from '../http/schema-docs.js'
import { WIRE_EXAMPLES } from '../wire-examples.js'
import { PERMISSION_QUERY_LIMITS, PermissionQueryShape } from './permission-query.js'
import { VERDICT_CODES } from './verification.js'

/**
 * v1's keys.verifyKey (Unkey's v1), whole: what the API reference says of it, its body and its answer. Served by the
 * verifier (verifier/verify-key-route.ts) and, in `keygate dev` and embedded, by the control plane, from this one
 * definition; control-plane/openapi/operations.ts documents it from here.
 */
export const VERIFY_KEY_DOC: OperationDoc = {
  summary: 'Verify a key (always 200 for a well-formed request: valid and code say the verdict)',
  description:
    "What your API calls, usually on the verifier sidecar; no root key. A key that does not verify is an answer, not an error: 200 with `valid: false` and the `code` that says why. A RATE_LIMITED answer names the limit that refused the call in the `Unkey-Ratelimit-Triggered` header, as Unkey v1 did (`default`: the key's own).",
  rootKey: false,
  tag: 'keys',
}

const COST = { minimum: 0, maximum: 1_000_000 }
/** The request body. */
export const VerifyKeyBody = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The key to verify, as your client sent it (keys.createKey returned it once)',
      examples: [WIRE_EXAMPLES.key],
    }),
    apiId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 256,
        description:
          'Only valid for this api: a key of another api answers FORBIDDEN. The `apiId` apis.createApi returned',
        examples: [WIRE_EXAMPLES.apiId],
      }),
    ),
    tags: Type.Optional(
      Type.Array(Type.String({ maxLength: 128, description: 'A tag, up to 128 characters' }), {
        maxItems: 10,
        description: 'Analytics tags (up to 10), recorded with the verification (`tags` in key_verifications_v1)',
      }),
    ),
    // The query's shape is recursive: checked (with limits) by queryProblem rather than by the schema.
    authorization: Type.Optional(
      Type.Object(
        {
          permissions: Type.Optional(
            documentedAs(
              Type.Unknown({
                description: `What the key's permissions must satisfy: a permission name, or {and: […]} / {or: […]} of such queries, nested up to ${PERMISSION_QUERY_LIMITS.depth} levels, at most ${PERMISSION_QUERY_LIMITS.terms} names. Otherwise INSUFFICIENT_PERMISSIONS`,
                examples: [{ and: ['documents.read', { or: ['documents.write', 'admin'] }] }],
              }),
              PermissionQueryShape,
            ),
          ),
        },
        { additionalProperties: false, description: 'Permissions the key must have for this request' },
      ),
    ),
    remaining: Type.Optional(
      Type.Object(
        {
          cost: Type.Optional(
            Type.Integer({ ...COST, description: 'Credits this verification spends (default 1; 0 is free)' }),
          ),
        },
        { additionalProperties: false, description: 'For keys with credits: what this verification costs' },
      ),
    ),
    ratelimit: Type.Optional(
      Type.Object(
        {
          cost: Type.Optional(
            Type.Integer({
              ...COST,
              description: "Units of the key's own rate limit this verification uses (default 1)",
            }),
          ),
        },
        { additionalProperties: false, description: "Deprecated (Unkey): the cost against the key's own rate limit" },
      ),
    ),
    ratelimits: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({
              minLength: 1,
              maxLength: 128,
              description:
                "The limit's name: the key's (`default` is its own `ratelimit`) or its identity's limit of that name, or one this call defines with limit and duration",
            }),
            cost: Type.Optional(Type.Integer({ ...COST, description: 'Units this verification uses (default 1)' })),
            limit: Type.Optional(
              Type.Integer({
                minimum: 1,
                maximum: 1_000_000_000,
                description: 'Units allowed per window: overrides the stored limit’s, or defines one (with duration)',
              }),
            ),
            duration: Type.Optional(
              Type.Integer({
                minimum: 1_000,
                maximum: 31 * 86_400_000,
                description:
                  'The window, milliseconds (fixed windows aligned to the epoch): overrides the stored limit’s, or defines one (with limit)',
              }),
            ),
            async: Type.Optional(
              Type.Boolean({
                description:
                  'true: counted in memory, reconciled every poll; false: exact. Default: the stored limit’s (exact unless set), true for one defined here',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        {
          maxItems: 10,
          description:
            'Rate limits for this request, beside the auto-applied ones: all or nothing (a refused call uses none). A name that is neither stored on the key or its identity nor given limit and duration is a 400',
          examples: [[{ name: 'uploads', limit: 10, duration: 60_000 }]],
        },
      ),
    ),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)

/** The 200 answer: an allow-list of what reaches the wire (never a hash). */
export const VerifyKeyResponse = Type.Object(
  {
    keyId: Type.Optional(Type.String({ description: "The key's id (absent for NOT_FOUND)" })),
    valid: Type.Boolean({ description: 'Whether the key may be used for this request: true only with code VALID' }),
    code: StringEnum(VERDICT_CODES, {
      description:
        "The verdict, checked in this order: NOT_FOUND (no such key), DISABLED, FORBIDDEN (another api than `apiId`), EXPIRED, FORBIDDEN (the client's address is outside the key's or its api's IP allow-list), INSUFFICIENT_PERMISSIONS, RATE_LIMITED, USAGE_EXCEEDED (no credits left), VALID",
    }),
    name: Type.Optional(Type.String({ description: "The key's name" })),
    ownerId: Type.Optional(Type.String({ description: "The key's externalId: who it belongs to" })),
    meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: "The key's meta" })),
    expires: Type.Optional(Type.Number({ description: 'When the key expires, unix milliseconds' })),
    enabled: Type.Optional(Type.Boolean({ description: 'Whether the key is enabled' })),
    environment: Type.Optional(Type.String({ description: "The key's environment label" })),
    permissions: Type.Optional(Type.Array(Type.String(), { description: "The key's permissions" })),
    roles: Type.Optional(Type.Array(Type.String(), { description: "The key's roles" })),
    identity: Type.Optional(
      Type.Object(
        {
          id: Type.String({ description: "The identity's id" }),
          externalId: Type.String({ description: 'Its id in your system: the key’s externalId' }),
          meta: Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta (`{}` when none)' }),
        },
        { description: 'The identity the key belongs to (through its externalId), when there is one' },
      ),
    ),
    remaining: Type.Optional(Type.Integer({ description: 'Credits left after this verification (keys with credits)' })),
    ratelimit: Type.Optional(
      Type.Object(
        {
          limit: Type.Integer({ description: 'Units allowed per window' }),
          remaining: Type.Integer({ description: 'Units left in this window' }),
          reset: Type.Number({ description: 'When the window ends, unix milliseconds' }),
        },
        { description: "The rate limit that decided, or the key's own" },
      ),
    ),
    ratelimits: Type.Optional(
      Type.Array(
        Type.Object({
          name: Type.String({ description: "The limit's name" }),
          limit: Type.Integer({ description: 'Units allowed per window' }),
          duration: Type.Integer({ description: 'The window, milliseconds' }),
          remaining: Type.Integer({ description: 'Units left in this window' }),
          reset: Type.Number({ description: 'When the window ends, unix milliseconds' }),
          exceeded: Type.Boolean({ description: 'Whether this limit refused the call' }),
        }),
        {
          description:
            "Keygate's (Unkey v2 has it): every limit the call was checked against, in order, up to the one that refused it",
        },
      ),
    ),
    requestId: Type.String({ description: "This request's id (also the X-Request-Id header)" }),
  },
  {
    examples: [
      {
        keyId: WIRE_EXAMPLES.keyId,
        valid: true,
        code: 'VALID',
        name: 'acme checkout',
        ownerId: 'acme',
        meta: { plan: 'pro' },
        enabled: true,
        requestId: WIRE_EXAMPLES.requestId,
      },
    ],
  },
)

export type VerifyKeyBodyInput = Static<typeof VerifyKeyBody>
