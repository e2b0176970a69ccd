import { Type } from 'typebox'
import { DEFAULT_LEAK_POLICY, LEAK_POLICIES } from '../../../shared/leak.js'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { IpAllowlistField, IpAllowlistResponse } from '../../wire/fields.js'
import { LIMITS } from '../../input-limits.js'
import { VERDICT_CODES } from '../../../shared/verification/verification.js'

// At least 3 characters, as Unkey v1 requires (its v1_apis_createApi.error tests refuse '' and 'ab').
const ApiName = Type.String({
  minLength: 3,
  maxLength: LIMITS.nameLength,
  description: 'A name for people, 3–256 characters (not unique: the api is known by the id it gets)',
  examples: ['payments'],
})

const LEAK_POLICY_DOC = `What a leak report does to a key of the api: notify (marks it leaked only), disable, or delete it (default ${DEFAULT_LEAK_POLICY})`
export const LeakPolicyField = (description = LEAK_POLICY_DOC) => StringEnum(LEAK_POLICIES, { description })

/** What analytics.getUsage counts as billable: a verification outcome, as verifyKey answers it. */
export const BillableOutcomesField = (description: string) =>
  Type.Array(StringEnum(VERDICT_CODES, { description: 'A verification outcome' }), {
    minItems: 0,
    maxItems: VERDICT_CODES.length,
    uniqueItems: true,
    description,
  })
const BILLABLE_DOC = "The outcomes analytics.getUsage counts as billable for the api (Keygate's; default VALID)"
export const BillableOutcomesInput = () => BillableOutcomesField(`${BILLABLE_DOC}: null or [] back to the default`)
export const BillableOutcomesResponse = () => BillableOutcomesField(BILLABLE_DOC)

const API_LIST_DOC = 'The addresses every key of the api may be verified from (Keygate’s); a key’s own list applies too'
export const ApiAllowlistField = () => IpAllowlistField(API_LIST_DOC)
export const ApiAllowlistResponse = () => IpAllowlistResponse("The api's IP allow-list")

/** v1's apis.createApi: Unkey's `name`, and Keygate's settings under v1's name for an allow-list, `ipWhitelist`. */
export const CreateApiBodyV1 = Type.Object(
  {
    name: ApiName,
    ipWhitelist: Type.Optional(ApiAllowlistField()),
    leakPolicy: Type.Optional(LeakPolicyField()),
  },
  { additionalProperties: false, examples: [{ name: 'payments' }] },
)

/** v2's apis.createApi: Unkey's `name`, and Keygate's settings (`ipAllowlist`, as v2 names its fields). */
export const CreateApiBodyV2 = Type.Object(
  {
    name: ApiName,
    ipAllowlist: Type.Optional(ApiAllowlistField()),
    leakPolicy: Type.Optional(LeakPolicyField()),
  },
  { additionalProperties: false, examples: [{ name: 'payments' }] },
)
