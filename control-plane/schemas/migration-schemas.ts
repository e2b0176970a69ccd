import { Type, type Static } from 'typebox'
import { hashKey } from '../../shared/key-material.js'
import { StringEnum } from '../../shared/http/schema-docs.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { NEW_KEY_FIELDS } from './key-schemas.js'

/** Keys per migrations.createKeys call, as Unkey allows. */
export const MAX_KEYS_PER_IMPORT = 100
/** What verifyKey accepts: a longer key could be imported but never verified. */
const MAX_PLAINTEXT = 1024
/** SHA-256 in standard base64: 43 characters and one `=` (checked by key-import.ts, after the root key's rights). */
export const SHA256_BASE64 = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/

const EXAMPLE_IMPORTED = 'sk_live_4qJc9ZtWm1Xp7RbE'

export const ImportedKey = Type.Object(
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
export type ImportedKey = Static<typeof ImportedKey>

export const CreateKeysBody = Type.Array(ImportedKey, {
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
export type CreateKeysBody = Static<typeof CreateKeysBody>

export const CreateKeysResponse = Type.Object(
  {
    keyIds: Type.Array(Type.String(), {
      description: "The new keys' ids, in the order of the request",
    }),
  },
  { examples: [{ keyIds: [WIRE_EXAMPLES.keyId] }] },
)
