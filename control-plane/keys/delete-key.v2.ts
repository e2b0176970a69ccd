import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { KeyIdField, EmptyResponse } from '../wire/fields.js'
import { deleteKey } from './delete-key.js'

const DeleteKeyBody = Type.Object(
  {
    keyId: KeyIdField('The key to delete: the `keyId` that keys.createKey returned'),
    permanent: Type.Optional(
      Type.Boolean({ description: 'Accepted: Keygate always removes a deleted key (only its hash existed)' }),
    ),
  },
  { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId }] },
)

/** v2's keys.deleteKey. `permanent` is accepted: Keygate always removes the record. */
export const deleteKeyV2 = v2Route({
  operation: 'keys.deleteKey',
  doc: { summary: 'Delete a key', tag: 'v2 keys' },
  body: DeleteKeyBody,
  data: EmptyResponse,
  handle: async ({ keyId }, caller, deps) => {
    await deleteKey(deps, caller, keyId)
    return { data: {} }
  },
})
