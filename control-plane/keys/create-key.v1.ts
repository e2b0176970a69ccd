import { Type } from 'typebox'
import { KEY_BYTES_DEFAULT, KEY_BYTES_MAX, KEY_BYTES_MIN, KEY_PREFIX_PATTERN } from '../../shared/keys/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { NEW_KEY_FIELDS, NewKeyResponse } from './wire/key-schemas.js'
import { KeyAllowlistField } from '../wire/fields.js'
import { normalisedAllowlist } from '../../shared/addresses/ip-allowlist.js'
import { authorizeCreateKey, createKey } from './create-key.js'
import { newKeyOfV1 } from './wire/new-key.v1.js'

const CreateKeyBody = Type.Object(
  {
    ...NEW_KEY_FIELDS,
    prefix: Type.Optional(
      Type.String({
        pattern: KEY_PREFIX_PATTERN,
        description: 'Starts the key, followed by `_`: 1–16 letters or digits (e.g. `sk` gives `sk_…`)',
        examples: ['sk'],
      }),
    ),
    byteLength: Type.Optional(
      Type.Integer({
        minimum: KEY_BYTES_MIN,
        maximum: KEY_BYTES_MAX,
        description: `Random bytes in the key, ${KEY_BYTES_MIN}–${KEY_BYTES_MAX} (default ${KEY_BYTES_DEFAULT})`,
      }),
    ),
    recoverable: Type.Optional(
      Type.Boolean({
        description:
          "Unkey's: keep the key so it can be shown again. Keygate keeps only a hash, so `true` answers 412: leave it out",
      }),
    ),
    ipWhitelist: Type.Optional(KeyAllowlistField()),
  },
  {
    additionalProperties: false,
    examples: [
      { apiId: WIRE_EXAMPLES.apiId, name: 'acme checkout', prefix: 'sk', externalId: 'acme', meta: { plan: 'pro' } },
    ],
  },
)

/** v1's keys.createKey: Unkey's v1 fields; a permission or role not made yet is made if the root key may. */
export const createKeyV1 = v1Route({
  operation: 'keys.createKey',
  method: 'POST',
  doc: {
    summary: 'Create a key (the key is shown once; only its hash is stored)',
    description:
      'Needs an api: create one with apis.createApi and put its `apiId` here. The answer holds the key itself, shown this once.',
    tag: 'keys',
  },
  input: CreateKeyBody,
  answer: NewKeyResponse,
  authorize: ({ apiId }, caller) => authorizeCreateKey(caller, apiId),
  handle: ({ ipWhitelist, prefix, byteLength, recoverable, ...fields }, caller, deps) =>
    createKey(deps, caller, {
      ...newKeyOfV1(fields),
      prefix,
      byteLength,
      recoverable,
      ipAllowlist: ipWhitelist && normalisedAllowlist({ field: 'ipWhitelist', entries: ipWhitelist }),
      missingGrantNames: 'create-if-allowed',
    }),
})
