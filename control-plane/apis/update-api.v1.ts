import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { apiSettingsView } from './api-settings-view.js'
import { v1Route } from '../http/management-route.js'
import {
  ApiAllowlistField,
  ApiAllowlistResponse,
  BillableOutcomesInput,
  BillableOutcomesResponse,
  LeakPolicyField,
} from './wire/api-schemas.js'
import { ApiIdField } from '../wire/fields.js'
import { Nullable } from '../keys/wire/key-schemas.js'
import { updateApi } from './update-api.js'

const UpdateApiBody = Type.Object(
  {
    apiId: ApiIdField('The api to change: the `apiId` that apis.createApi returned'),
    ipWhitelist: Type.Optional(Nullable(ApiAllowlistField(), 'Replaces the list (null or [] removes it)')),
    leakPolicy: Type.Optional(Nullable(LeakPolicyField(), 'Sets the policy (null: back to the default, disable)')),
    billableOutcomes: Type.Optional(Nullable(BillableOutcomesInput(), 'Replaces the list (null or []: back to VALID)')),
  },
  {
    additionalProperties: false,
    description: 'Fields left out are unchanged; null clears one',
    examples: [{ apiId: WIRE_EXAMPLES.apiId, ipWhitelist: ['10.0.0.0/8'], leakPolicy: 'disable' }],
  },
)

/** v1's apis.updateApi, Keygate's own (Unkey v1 has none): answers the api and its settings as they now are. */
export const updateApiV1 = v1Route({
  operation: 'apis.updateApi',
  method: 'POST',
  doc: {
    summary: "Change an api's settings: its IP allow-list, its leak policy, what its usage bills",
    description:
      "Keygate's own (Unkey has no such call). Every verifier applies a change within the revocation bound. Send only `apiId` to read the settings (v1's getApi answers exactly Unkey's fields): nothing is written then.",
    tag: 'apis',
  },
  input: UpdateApiBody,
  answer: Type.Object({
    apiId: Type.String({ description: "The api's id" }),
    name: Type.String({ description: 'Its name' }),
    ipWhitelist: Type.Optional(ApiAllowlistResponse()),
    leakPolicy: LeakPolicyField('What a leak report does to a key of the api (`disable` unless set)'),
    billableOutcomes: BillableOutcomesResponse(),
  }),
  handle: async ({ apiId, ipWhitelist, leakPolicy, billableOutcomes }, caller, deps) => {
    const ipAllowlist = ipWhitelist && { field: 'ipWhitelist', entries: ipWhitelist }
    const { api, settings } = await updateApi(deps, caller, { apiId, ipAllowlist, leakPolicy, billableOutcomes })
    const { ipAllowlist: list, ...rest } = apiSettingsView(settings)
    return { apiId: api.id, name: api.name, ipWhitelist: list, ...rest }
  },
})
