import { Type } from 'typebox'
import { toKeyResponse } from './key-response.js'
import { v1Route } from '../http/management-route.js'
import { DecryptField, KeyIdField } from '../wire/fields.js'
import { KeyResponse } from './wire/key-schemas.js'
import { noPlaintext } from './rules/v1-field-rules.js'
import { getKey } from './get-key.js'

/** v1's keys.getKey: a GET; asking for the key itself (`decrypt`) is refused before the key is looked up. */
export const getKeyV1 = v1Route({
  operation: 'keys.getKey',
  method: 'GET',
  doc: { summary: 'Read a key', tag: 'keys' },
  input: Type.Object({ keyId: KeyIdField(), decrypt: DecryptField() }),
  answer: KeyResponse,
  handle: async ({ keyId, decrypt }, caller, deps) => {
    if (decrypt) throw noPlaintext()
    const { record, context } = await getKey(deps, caller, keyId)
    return toKeyResponse(record, context)
  },
})
