import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { ApiAllowlistResponse, BillableOutcomesField, LeakPolicyField } from './wire/api-schemas.js'
import { ApiIdField } from '../wire/fields.js'
import { getApi } from './get-api.js'

/**
 * v2's apis.getApi: a POST; Unkey's `id` and `name`, and Keygate's settings where the api sets them (an api that sets
 * none answers exactly Unkey's shape).
 */
export const getApiV2 = v2Route({
  operation: 'apis.getApi',
  doc: { summary: 'Read an api and its settings', tag: 'v2 apis' },
  body: Type.Object({ apiId: ApiIdField() }, { additionalProperties: false }),
  data: Type.Object({
    id: Type.String({ description: "The api's id" }),
    name: Type.String({ description: 'Its name' }),
    ipAllowlist: Type.Optional(ApiAllowlistResponse()),
    leakPolicy: Type.Optional(
      LeakPolicyField("Keygate's: what a leak report does to a key of the api, when set (absent: `disable`)"),
    ),
    billableOutcomes: Type.Optional(
      BillableOutcomesField("Keygate's: the outcomes analytics.getUsage bills for the api, when set (absent: VALID)"),
    ),
  }),
  handle: async ({ apiId }, caller, deps) => {
    const { api, settings } = await getApi(deps, caller, apiId)
    const { ipAllowlist, leakPolicy, billableOutcomes } = settings
    return { data: { id: api.id, name: api.name, ipAllowlist, leakPolicy, billableOutcomes } }
  },
})
