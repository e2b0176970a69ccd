import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { KeyIdField } from '../wire/fields.js'
import { noPlaintext } from './rules/v1-field-rules.js'
import { KeyData, toKeyData } from './wire/key-data.v2.js'
import { getKey } from './get-key.js'

const GetKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to read: the `keyId` that keys.createKey returned'),
    decrypt: Type.Optional(
      Type.Boolean({ description: 'Show the key itself: Keygate keeps only its hash, so `true` answers 412' }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

/** v2's keys.getKey: a POST; asking for the key itself (`decrypt`) is refused once the key is found and readable. */
export const getKeyV2 = v2Route({
  operation: 'keys.getKey',
  doc: { summary: 'Read a key by its id', tag: 'v2 keys' },
  body: GetKeyBody,
  data: KeyData,
  handle: async ({ keyId, decrypt }, caller, deps) => {
    const { record, context } = await getKey(deps, caller, keyId)
    if (decrypt) throw noPlaintext()
    return { data: toKeyData(record, context) }
  },
})
