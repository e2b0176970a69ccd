import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { KeyIdField } from '../wire/fields.js'
import { NewKeyData } from './wire/key-data.v2.js'
import { rerollKey } from './reroll-key.js'

// Unkey's schema takes other fields too (it has no additionalProperties: false here), and so does Keygate.
const RerollKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to replace: the `keyId` that keys.createKey returned'),
    expiration: Type.Integer({
      minimum: 0,
      maximum: 4_102_444_800_000,
      description: 'Grace period: the old key keeps working this many milliseconds (0: it stops at once)',
      examples: [3_600_000],
    }),
  },
  { examples: [{ keyId: WIRE_EXAMPLES.keyId, expiration: 3_600_000 }] },
)

/**
 * v2's keys.rerollKey: the root key needs create_key on the key's api, as Unkey's v2 asks (v1's also update_key).
 * Credits move to the new key, as in v1.
 */
export const rerollKeyV2 = v2Route({
  operation: 'keys.rerollKey',
  doc: {
    summary: 'Issue a new key in place of one; the old one stops verifying after `expiration` milliseconds',
    tag: 'v2 keys',
  },
  body: RerollKeyBody,
  data: NewKeyData,
  handle: async ({ keyId, expiration }, caller, deps) => ({
    data: await rerollKey(deps, caller, { keyId, expiration, alsoNeedsUpdateKey: false }),
  }),
})
