import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { NAMES_NO_RECORD } from '../openapi/v2-operations.js'
import { CreateApiBodyV2 } from './wire/api-schemas.js'
import { createApi } from './create-api.js'

/** v2's apis.createApi: answers the new api's id. `ipAllowlist` and `leakPolicy` are Keygate's. */
export const createApiV2 = v2Route({
  operation: 'apis.createApi',
  doc: { summary: 'Create an api (a namespace for keys)', tag: 'v2 apis', errors: NAMES_NO_RECORD },
  body: CreateApiBodyV2,
  data: Type.Object({
    apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
  }),
  handle: async ({ name, ipAllowlist, leakPolicy }, caller, deps) => {
    const allowlist = ipAllowlist && { field: 'ipAllowlist', entries: ipAllowlist }
    return { data: { apiId: (await createApi(deps, caller, { name, ipAllowlist: allowlist, leakPolicy })).id } }
  },
})
