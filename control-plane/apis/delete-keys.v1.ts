import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, PermanentField } from '../wire/fields.js'
import { deleteKeys } from './delete-keys.js'

const DeleteKeysBody = Type.Object(
  {
    apiId: ApiIdField('The api whose keys to delete (the api stays): the `apiId` that apis.createApi returned'),
    permanent: PermanentField(),
  },
  { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId }] },
)

/** v1's apis.deleteKeys. `permanent` is accepted: deleted keys are always removed. */
export const deleteKeysV1 = v1Route({
  operation: 'apis.deleteKeys',
  method: 'POST',
  doc: { summary: "Delete all of an api's keys", tag: 'apis' },
  input: DeleteKeysBody,
  answer: Type.Object({ deletedKeys: Type.Integer({ description: 'How many keys were deleted' }) }),
  handle: async ({ apiId }, caller, deps) => ({ deletedKeys: await deleteKeys(deps, caller, apiId) }),
})
