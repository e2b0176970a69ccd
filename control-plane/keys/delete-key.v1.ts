import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { KeyIdField, PermanentField, EmptyResponse } from '../wire/fields.js'
import { deleteKey } from './delete-key.js'

const DeleteKeyBody = Type.Object(
  { keyId: KeyIdField('The key to delete: the `keyId` that keys.createKey returned'), permanent: PermanentField() },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

/** v1's keys.deleteKey. `permanent` is accepted for Unkey's clients: Keygate always removes the record. */
export const deleteKeyV1 = v1Route({
  operation: 'keys.deleteKey',
  method: 'POST',
  doc: { summary: 'Delete a key', tag: 'keys' },
  input: DeleteKeyBody,
  answer: EmptyResponse,
  handle: async ({ keyId }, caller, deps) => {
    await deleteKey(deps, caller, keyId)
    return {}
  },
})
