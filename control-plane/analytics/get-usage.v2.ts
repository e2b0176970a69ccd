import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { getUsage } from './get-usage.js'
import { ApiIdsField, USAGE_DOC, UsageSummaryAnswer, usageInputFields } from './wire/usage-schemas.js'

/** v2's analytics.getUsage (Keygate's; Unkey has none): a POST, the apis as `apiIds`. */
export const getUsageV2 = v2Route({
  operation: 'analytics.getUsage',
  doc: { ...USAGE_DOC, errors: [...USAGE_DOC.errors], tag: 'v2 analytics' },
  body: Type.Object(
    { ...usageInputFields, apiIds: Type.Optional(ApiIdsField) },
    {
      additionalProperties: false,
      examples: [{ externalId: 'acme', start: 1_767_225_600_000, granularity: 'day' }],
    },
  ),
  data: UsageSummaryAnswer,
  handle: async ({ apiIds, granularity, ...body }, caller, deps) => ({
    data: await getUsage(deps, caller, { ...body, apiIds: apiIds ?? [], granularity: granularity ?? 'day' }),
  }),
})
