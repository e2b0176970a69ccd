import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { apiSettingsView } from './api-settings-view.js'
import { v2Route } from '../http/management-route.js'
import {
  ApiAllowlistField,
  ApiAllowlistResponse,
  BillableOutcomesInput,
  BillableOutcomesResponse,
  LeakPolicyField,
} from './wire/api-schemas.js'
import { ApiIdField } from '../wire/fields.js'
import { Nullable } from '../keys/wire/key-bodies.v2.js'
import { updateApi } from './update-api.js'

const UpdateApiBody = Type.Object(
  {
    apiId: ApiIdField('The api to change: the `apiId` that apis.createApi returned'),
    ipAllowlist: Type.Optional(Nullable(ApiAllowlistField(), 'Replaces the list (null or [] removes it)')),
    leakPolicy: Type.Optional(Nullable(LeakPolicyField(), 'Sets the policy (null: back to the default, disable)')),
    billableOutcomes: Type.Optional(Nullable(BillableOutcomesInput(), 'Replaces the list (null or []: back to VALID)')),
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ apiId: WIRE_EXAMPLES.apiId, ipAllowlist: ['10.0.0.0/8'], leakPolicy: 'disable' }],
  },
)

/** v2's apis.updateApi, Keygate's own (Unkey v2 has none): answers the api and its settings as they now are. */
export const updateApiV2 = v2Route({
  operation: 'apis.updateApi',
  doc: {
    summary: "Change an api's settings: its IP allow-list, its leak policy, what its usage bills",
    description: "Keygate's own (Unkey has no such call). Every verifier applies a change within the revocation bound.",
    tag: 'v2 apis',
  },
  body: UpdateApiBody,
  data: Type.Object({
    id: Type.String({ description: "The api's id" }),
    name: Type.String({ description: 'Its name' }),
    ipAllowlist: Type.Optional(ApiAllowlistResponse()),
    leakPolicy: LeakPolicyField('What a leak report does to a key of the api (`disable` unless set)'),
    billableOutcomes: BillableOutcomesResponse(),
  }),
  handle: async ({ apiId, ipAllowlist, leakPolicy, billableOutcomes }, caller, deps) => {
    const allowlist = ipAllowlist && { field: 'ipAllowlist', entries: ipAllowlist }
    const input = { apiId, ipAllowlist: allowlist, leakPolicy, billableOutcomes }
    const { api, settings } = await updateApi(deps, caller, input)
    return { data: { id: api.id, name: api.name, ...apiSettingsView(settings) } }
  },
})
