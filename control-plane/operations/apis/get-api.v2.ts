import { Type } from 'typebox'
import { v2Route } from '../../management-route.js'
import { ApiIdField } from '../../schemas/fields.js'
import { getApi } from './get-api.js'

/** v2's apis.getApi: a POST. */
export const getApiV2 = v2Route({
  operation: 'apis.getApi',
  doc: { summary: 'Read an api', tag: 'v2 apis' },
  body: Type.Object({ apiId: ApiIdField() }, { additionalProperties: false }),
  data: Type.Object({
    id: Type.String({ description: "The api's id" }),
    name: Type.String({ description: 'Its name' }),
  }),
  handle: async ({ apiId }, caller, deps) => {
    const api = await getApi(deps, caller, apiId)
    return { data: { id: api.id, name: api.name } }
  },
})
