import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { CreateApiBodyV1 } from './wire/api-schemas.js'
import { createApi } from './create-api.js'

/** v1's apis.createApi: answers the new api's id and its name. `ipWhitelist` and `leakPolicy` are Keygate's. */
export const createApiV1 = v1Route({
  operation: 'apis.createApi',
  method: 'POST',
  doc: { summary: 'Create an api (a namespace for keys)', tag: 'apis' },
  input: CreateApiBodyV1,
  answer: Type.Object({
    apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
    name: Type.String({ description: 'Its name' }),
  }),
  handle: async ({ name, ipWhitelist, leakPolicy }, caller, deps) => {
    const ipAllowlist = ipWhitelist && { field: 'ipWhitelist', entries: ipWhitelist }
    const api = await createApi(deps, caller, { name, ipAllowlist, leakPolicy })
    return { apiId: api.id, name: api.name }
  },
})
