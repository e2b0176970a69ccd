import { Type } from 'typebox'
import { KEY_PREFIX_PATTERN } from '../../shared/keys/key-material.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { KeyIdField } from '../wire/fields.js'
import { NewKeyResponse } from './wire/key-schemas.js'
import { rerollKey } from './reroll-key.js'

const RerollKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to replace: the `keyId` that keys.createKey returned'),
    expiration: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 30 * 24 * 3_600_000,
        description:
          'Grace period: the old key keeps working this many milliseconds (default 0: it stops at once; at most 30 days)',
        examples: [60_000],
      }),
    ),
    prefix: Type.Optional(
      Type.String({
        pattern: KEY_PREFIX_PATTERN,
        description: "The new key's prefix, 1–16 letters or digits (default: the old key's)",
      }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, expiration: 60_000 }] },
)

/** v1's keys.rerollKey (beyond Unkey v1): the root key needs create_key and update_key on the key's api. */
export const rerollKeyV1 = v1Route({
  operation: 'keys.rerollKey',
  method: 'POST',
  doc: { summary: 'Issue a new key in place of one, the old one expiring after a grace period', tag: 'keys' },
  input: RerollKeyBody,
  answer: NewKeyResponse,
  handle: (body, caller, deps) => rerollKey(deps, caller, { ...body, alsoNeedsUpdateKey: true }),
})
