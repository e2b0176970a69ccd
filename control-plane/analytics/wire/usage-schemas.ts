import { Type } from 'typebox'
import { StringEnum } from '../../../shared/http/schema-docs.js'
import { ApiIdField, KeyIdField } from '../../wire/fields.js'
import { LIMITS } from '../../input-limits.js'

/** Unix ms up to year 2286: far past any count kept, and well inside exact integers. */
const MAX_TIME = 9_999_999_999_999
const Time = (description: string, examples?: number[]) =>
  Type.Integer({ minimum: 0, maximum: MAX_TIME, description, ...(examples ? { examples } : {}) })
/** Apis one request may name. */
const MAX_API_IDS = 100

const GRANULARITY_DOC = 'Periods of an hour, a day or a month, UTC (default day)'
const ExternalId = Type.String({
  minLength: 1,
  maxLength: LIMITS.ownerIdLength,
  description: "An identity's usage, by its externalId: across its keys, over the apis the root key may read",
})

/** What every version's getUsage takes besides the apis: whose, from when to when, in which periods. */
export const usageInputFields = {
  externalId: Type.Optional(ExternalId),
  keyId: Type.Optional(KeyIdField("One key's usage (then leave externalId and apis out)")),
  start: Time('From, unix milliseconds: counted from the start of the period holding it', [1_767_225_600_000]),
  end: Type.Optional(Time('To, unix milliseconds, exclusive: every period starting before it (default: now)')),
  granularity: Type.Optional(StringEnum(['hour', 'day', 'month'], { description: GRANULARITY_DOC })),
}

const API_IDS_DOC = `With externalId, only these apis; alone, these apis' usage (at most ${MAX_API_IDS})`
/** v1's apis: a query parameter, repeated. */
export const ApiIdsParam = Type.Union([ApiIdField(), Type.Array(ApiIdField(), { maxItems: MAX_API_IDS })], {
  description: `${API_IDS_DOC}; repeat the parameter`,
})
/** v2's apis: a list. */
export const ApiIdsField = Type.Array(ApiIdField(), { maxItems: MAX_API_IDS, description: API_IDS_DOC })

const Count = (description: string) => Type.Integer({ description })
const usageFields = {
  verifications: Type.Object(
    {
      valid: Count('Verifications answered VALID'),
      rateLimited: Count('Verifications answered RATE_LIMITED'),
      usageExceeded: Count('Verifications answered USAGE_EXCEEDED'),
      disabled: Count('Verifications answered DISABLED'),
      expired: Count('Verifications answered EXPIRED'),
      forbidden: Count('Verifications answered FORBIDDEN'),
      insufficientPermissions: Count('Verifications answered INSUFFICIENT_PERMISSIONS'),
      notFound: Count("Verifications of keys that do not exist (counted per api: only in an api's usage)"),
      total: Count('Every verification counted'),
    },
    { description: 'Verifications by outcome' },
  ),
  billable: Count("Verifications of the outcomes each one's api bills (its billableOutcomes; VALID by default)"),
  spentCredits: Count('Credits the verifications spent'),
}

/** A usage summary, as both versions answer it. */
export const UsageSummaryAnswer = Type.Object({
  granularity: StringEnum(['hour', 'day', 'month'], { description: 'The periods' }),
  apiIds: Type.Union([Type.Array(Type.String()), Type.Literal('*')], {
    description: "The apis summed over: those named, or those the root key may read ('*': every api)",
  }),
  periods: Type.Array(
    Type.Object({
      start: Type.Integer({ description: "The period's start, unix milliseconds (UTC)" }),
      end: Type.Integer({ description: 'Its end (exclusive), unix milliseconds' }),
      ...usageFields,
    }),
    { description: 'Every period from the one holding start to the last one starting before end, oldest first' },
  ),
  total: Type.Object(usageFields, { description: 'The sum over the periods' }),
})

export const USAGE_DOC = {
  summary: "Usage for billing: an identity's, a key's or apis' verifications by outcome per hour, day or month",
  description:
    "Keygate's own. From the analytics engine's rollups (docs/billing.md): verifications by outcome, what is billable (each api's billableOutcomes, set with apis.updateApi; VALID by default) and the credits spent, per period (UTC) and in total. A deleted key's verifications still count. Needs read_analytics on every api it covers; an identity's usage spans the apis the root key may read. Answers 412 where this control plane serves no analytics.",
  errors: [
    'BAD_REQUEST',
    'UNAUTHORIZED',
    'INSUFFICIENT_PERMISSIONS',
    'NOT_FOUND',
    'PRECONDITION_FAILED',
    'RATE_LIMITED',
    'INTERNAL_SERVER_ERROR',
    'UNAVAILABLE',
  ],
} as const
