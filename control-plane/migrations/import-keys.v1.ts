import { Type } from 'typebox'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { importedMaterial } from './imported-material.js'
import { v1Route } from '../http/management-route.js'
import { NEW_KEY_FIELDS } from '../keys/wire/key-schemas.js'
import { newKeyOfV1 } from '../keys/wire/new-key.v1.js'
import { authorizeImportKeys, importKeys } from './import-keys.js'

/** Keys per migrations.createKeys call, as Unkey allows. */
const MAX_KEYS_PER_IMPORT = 100
/** What verifyKey accepts: a longer key could be imported but never verified. */
const MAX_PLAINTEXT = 1024

const EXAMPLE_IMPORTED = 'sk_live_4qJc9ZtWm1Xp7RbE'

const ImportedKey = Type.Object(
  {
    ...NEW_KEY_FIELDS,
    plaintext: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: MAX_PLAINTEXT,
        description: `The key itself (up to ${MAX_PLAINTEXT} characters): Keygate stores only its hash. Give this or \`hash\``,
      }),
    ),
    hash: Type.Optional(
      Type.Object(
        {
          value: Type.String({
            minLength: 1,
            maxLength: 128,
            description: 'SHA-256 of the key, standard base64 (44 characters): what Unkey stores',
          }),
          variant: StringEnum(['sha256_base64'], { description: 'How `value` was made; only sha256_base64' }),
        },
        {
          additionalProperties: false,
          description: "The key's hash, for a key you no longer hold. Give this or `plaintext`",
        },
      ),
    ),
    start: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'What getKey and listKeys show to recognise the key by: its prefix and first 4 characters (default: derived from `plaintext`, or empty)',
      }),
    ),
    prefix: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 16,
        description: 'The prefix the key starts with (before `_`), used only to derive `start` from `plaintext`',
      }),
    ),
  },
  { additionalProperties: false },
)
const CreateKeysBody = Type.Array(ImportedKey, {
  minItems: 1,
  maxItems: MAX_KEYS_PER_IMPORT,
  description: `1–${MAX_KEYS_PER_IMPORT} keys, each with the fields keys.createKey takes (\`byteLength\` aside: the key exists already), and its \`plaintext\` or \`hash\``,
  examples: [
    [
      { apiId: WIRE_EXAMPLES.apiId, plaintext: EXAMPLE_IMPORTED, externalId: 'acme', name: 'acme (from Unkey)' },
      {
        apiId: WIRE_EXAMPLES.apiId,
        hash: { value: hashKey(`${EXAMPLE_IMPORTED}x`), variant: 'sha256_base64' },
        start: 'sk_live_4qJc',
        remaining: 1000,
      },
    ],
  ],
})
const CreateKeysResponse = Type.Object(
  {
    keyIds: Type.Array(Type.String(), {
      description: "The new keys' ids, in the order of the request",
    }),
  },
  { examples: [{ keyIds: [WIRE_EXAMPLES.keyId] }] },
)

/**
 * v1's migrations.createKeys: imports existing keys (from Unkey, or any store of SHA-256 hashes) without reissuing
 * them. Keys of any apis, each by its plaintext or its hash, all or nothing (a taken hash is a
 * 409 and nothing is written). Every right is checked before the keys: create_key on each api, then the identities.
 */
export const importKeysV1 = v1Route({
  operation: 'migrations.createKeys',
  method: 'POST',
  doc: {
    summary: 'Import up to 100 existing keys, by plaintext or SHA-256 hash, without reissuing them',
    description:
      'Each key takes the fields of keys.createKey and its `plaintext` or `hash`. All or nothing: a duplicate (twice in the request, or already stored) is a 409 naming every one, and nothing is written.',
    tag: 'migrations',
    errors: [
      'BAD_REQUEST',
      'UNAUTHORIZED',
      'INSUFFICIENT_PERMISSIONS',
      'NOT_FOUND',
      'CONFLICT',
      'RATE_LIMITED',
      'INTERNAL_SERVER_ERROR',
      'UNAVAILABLE',
    ],
  },
  input: CreateKeysBody,
  answer: CreateKeysResponse,
  authorize: (body, caller) =>
    authorizeImportKeys(
      caller,
      body.map((key) => key.apiId),
    ),
  handle: async (body, caller, deps) => {
    const keys = body.map(({ plaintext, hash, start, prefix, ...fields }, i) => ({
      fields: newKeyOfV1(fields),
      material: importedMaterial({ plaintext, hash, start, prefix }, String(i)),
    }))
    const records = await importKeys(deps, caller, {
      keys,
      takenHashes: 'refuse-call',
      checkOrder: 'rights-first',
      auditAction: 'migrations.createKeys',
    })
    return { keyIds: records.flatMap((record) => (record ? [record.id] : [])) }
  },
})
