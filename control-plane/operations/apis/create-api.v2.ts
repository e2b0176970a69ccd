import { Type } from 'typebox'
import { v2Route } from '../../management-route.js'
import { NAMES_NO_RECORD } from '../../openapi/v2-operations.js'
import { CreateApiBody } from '../../schemas/api-schemas.js'
import { createApi } from './create-api.js'

/** v2's apis.createApi: answers the new api's id. */
export const createApiV2 = v2Route({
  operation: 'apis.createApi',
  doc: { summary: 'Create an api (a namespace for keys)', tag: 'v2 apis', errors: NAMES_NO_RECORD },
  body: CreateApiBody,
  data: Type.Object({
    apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
  }),
  handle: async ({ name }, caller, deps) => ({ data: { apiId: (await createApi(deps, caller, name)).id } }),
})
