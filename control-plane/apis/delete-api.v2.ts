import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { ApiIdField, EmptyResponse } from '../wire/fields.js'
import { deleteApi } from './delete-api.js'

/** v2's apis.deleteApi. */
export const deleteApiV2 = v2Route({
  operation: 'apis.deleteApi',
  doc: { summary: 'Delete an api and stop its keys from verifying', tag: 'v2 apis' },
  body: Type.Object(
    { apiId: ApiIdField('The api to delete, with every key of it: they all stop verifying') },
    { additionalProperties: false },
  ),
  data: EmptyResponse,
  handle: async ({ apiId }, caller, deps) => {
    await deleteApi(deps, caller, apiId)
    return { data: {} }
  },
})
