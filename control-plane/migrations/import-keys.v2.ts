import { Type, type Static } from 'typebox'
import { invalid, type ApiError } from '../../shared/errors/errors.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { importedHashProblem } from './imported-material.js'
import { v2Route } from '../http/management-route.js'
import { ApiIdField } from '../wire/fields.js'
import { RateLimitName } from '../wire/named-limit-schemas.js'
import { Names, Refill } from '../keys/wire/key-schemas.js'
import { LIMITS } from '../input-limits.js'
import { authorizeImportKeys, ImportedKeyError, importKeys, type KeyToImport } from './import-keys.js'

// The wire shapes are Unkey's V2KeysMigrateKeysRequestBody, V2KeysMigrateKeyData…

/** Keys per call: Unkey sets none (and writes in chunks of this many); the body limit (1 MiB) bounds it too. */
const MAX_KEYS_PER_MIGRATION = 1000

// Unkey's KeyCreditsData: `remaining` required, null for no credits.
const Credits = Type.Object(
  {
    remaining: Type.Union([Type.Integer({ minimum: 0, maximum: 1_000_000_000_000 }), Type.Null()], {
      description: 'Credits left: the key verifies this many times, then USAGE_EXCEEDED (null: no credits)',
    }),
    refill: Type.Optional(Refill),
  },
  { additionalProperties: false, description: "The key's credits" },
)

// Unkey's RatelimitRequest (which does not refuse unknown fields).
const Ratelimit = Type.Object({
  name: RateLimitName(),
  limit: Type.Integer({ minimum: 1, maximum: 1_000_000_000, description: 'Units allowed per window' }),
  duration: Type.Integer({ minimum: 1_000, maximum: 31 * 86_400_000, description: 'The window, in milliseconds' }),
  autoApply: Type.Optional(
    Type.Boolean({ description: 'Applied to every verification, named or not (default false: only when named)' }),
  ),
})

// Unkey's V2KeysMigrateKeyData with Keygate's bounds where they are tighter (deliberately): a key holds at most 100
// permissions (Unkey: 1000), names are those keys.createKey takes, and `hash` must be a SHA-256 in base64, checked
// after the root key's rights (imported-material.ts); there is no `prefix` or `start` (Unkey's has none: `start` is
// empty).
const MigratedKey = Type.Object(
  {
    hash: Type.String({
      minLength: 3,
      maxLength: 128,
      description: 'SHA-256 of the key in standard base64 (44 characters): what Unkey stores, and Keygate',
    }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: 'A name for people' })),
    externalId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: LIMITS.ownerIdLength,
        description: 'Who the key belongs to, in your terms: its identity is made when missing',
      }),
    ),
    meta: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), { description: 'Any JSON object, returned by verifyKey' }),
    ),
    roles: Type.Optional(
      Names('Roles by name (a missing one is made if the root key may: rbac.*.create_role)', ['editor'], 'role'),
    ),
    permissions: Type.Optional(
      Names('Permissions by slug (a missing one is made if the root key may: rbac.*.create_permission)', [
        'documents.read',
      ]),
    ),
    expires: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 4_102_444_800_000, description: 'When the key expires, unix milliseconds' }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: 'false: the key exists but does not verify (default true)' })),
    credits: Type.Optional(Credits),
    ratelimits: Type.Optional(Type.Array(Ratelimit, { maxItems: 50, description: "The key's named rate limits" })),
  },
  { additionalProperties: false },
)
type MigratedKey = Static<typeof MigratedKey>

const MigrateKeysBody = Type.Object(
  {
    migrationId: Type.String({
      minLength: 3,
      maxLength: 255,
      description:
        "Unkey's migration (which picks how its hashes were made). Keygate has one way, SHA-256 in base64: any id is taken, and recorded in the audit log",
    }),
    apiId: ApiIdField('The api the keys go to'),
    keys: Type.Array(MigratedKey, {
      minItems: 1,
      maxItems: MAX_KEYS_PER_MIGRATION,
      description: `1–${MAX_KEYS_PER_MIGRATION} keys, each by its hash`,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        migrationId: 'from_unkey',
        apiId: WIRE_EXAMPLES.apiId,
        keys: [{ hash: hashKey('sk_live_4qJc9ZtWm1Xp7RbE'), externalId: 'acme' }],
      },
    ],
  },
)

const MigrateKeysData = Type.Object({
  migrated: Type.Array(
    Type.Object({
      hash: Type.String({ description: 'The hash as sent' }),
      keyId: Type.String({ description: "The key's id" }),
    }),
    { description: 'The keys stored, in the order sent' },
  ),
  failed: Type.Array(Type.String({ description: 'The hash as sent' }), {
    description:
      'The keys not stored, in the order sent: their hash was stored already, or an earlier key of the call had it',
  }),
})

/**
 * v2's keys.migrateKeys: keys that exist elsewhere, by hash, into one api. Each key is stored, or answered in
 * `failed` when its hash is taken; everything else about the call (fields, api, the root key's rights, including
 * making missing permissions and roles) is checked before anything is written and fails the whole call, as
 * migrations.createKeys does. A problem with a key is located at it (`keys.3.credits.refill`).
 */
export const importKeysV2 = v2Route({
  operation: 'keys.migrateKeys',
  doc: {
    summary: 'Import existing keys by their hash, without reissuing them',
    description:
      'With `migrationId: "sha256"`, each `hash` is the SHA-256 of the key, base64-encoded (what Keygate stores). A hash that is stored already is listed in `failed`, never inserted twice.',
    tag: 'v2 keys',
  },
  body: MigrateKeysBody,
  data: MigrateKeysData,
  authorize: ({ apiId }, caller) => authorizeImportKeys(caller, [apiId]),
  handle: async ({ migrationId, apiId, keys }, caller, deps) => {
    const toImport = keys.map((key): KeyToImport => ({
      fields: fieldsOf(apiId, key),
      material: importedHashProblem(key.hash, 'hash') ?? { hash: key.hash, start: '' },
    }))
    const outcomes = await importKeys(deps, caller, {
      keys: toImport,
      takenHashes: 'skip-key',
      checkOrder: 'api-first',
      auditAction: 'keys.migrateKeys',
      migrationId,
    }).catch(locatedAtKey)
    return {
      data: {
        migrated: outcomes.flatMap((record, i) => (record ? [{ hash: keys[i]!.hash, keyId: record.id }] : [])),
        failed: outcomes.flatMap((record, i) => (record ? [] : [keys[i]!.hash])),
      },
    }
  },
})

/** A v2 key as the fields keys.createKey takes (v1's names: `remaining`, `refill`). */
function fieldsOf(apiId: string, key: MigratedKey): KeyToImport['fields'] {
  return {
    apiId,
    name: key.name,
    externalId: key.externalId,
    meta: key.meta,
    expires: key.expires,
    enabled: key.enabled,
    remaining: key.credits?.remaining ?? undefined,
    refill: key.credits?.refill,
    ratelimits: key.ratelimits?.map(({ name, limit, duration, autoApply }) => ({
      name,
      limit,
      duration,
      ...(autoApply !== undefined ? { autoApply } : {}),
    })),
    permissions: key.permissions,
    roles: key.roles,
  }
}

/** A problem with one of the keys, located at it. */
function locatedAtKey(err: unknown): never {
  throw err instanceof ImportedKeyError ? located(err.error, `keys.${err.index}`) : err
}

// The fields whose v2 names differ from those newKeyRecord's messages use.
const V2_FIELDS: Record<string, string> = { remaining: 'credits.remaining', refill: 'credits.refill' }

/**
 * A key's 400 about a field (`refill: …`) as one about the key's (`keys.3.credits.refill: …`), and one about the
 * request as a whole as one about the key (`keys.3: …`), so that v2's `errors` locate it. A broken bound (meta too
 * large, a limit named twice) is such a 400.
 */
function located(err: ApiError, at: string): ApiError {
  if (err.code !== 'BAD_REQUEST') return err
  const field = err.details?.fields?.[0]
  if (field === undefined || field.location === 'body') return invalid(at, err.message)
  const [name, ...rest] = field.location.slice('body.'.length).split('.')
  return invalid([at, V2_FIELDS[name!] ?? name, ...rest].join('.'), field.message)
}
