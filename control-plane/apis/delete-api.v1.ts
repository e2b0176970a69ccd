import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, EmptyResponse } from '../wire/fields.js'
import { deleteApi } from './delete-api.js'

const DeleteApiBody = Type.Object(
  { apiId: ApiIdField('The api to delete, with every key of it: the `apiId` that apis.createApi returned') },
  { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId }] },
)

/** v1's apis.deleteApi. */
export const deleteApiV1 = v1Route({
  operation: 'apis.deleteApi',
  method: 'POST',
  doc: { summary: 'Delete an api and stop its keys from verifying', tag: 'apis' },
  input: DeleteApiBody,
  answer: EmptyResponse,
  handle: async ({ apiId }, caller, deps) => {
    await deleteApi(deps, caller, apiId)
    return {}
  },
})
