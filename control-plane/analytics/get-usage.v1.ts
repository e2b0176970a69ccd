import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { getUsage } from './get-usage.js'
import { ApiIdsParam, USAGE_DOC, UsageSummaryAnswer, usageInputFields } from './wire/usage-schemas.js'

/** v1's analytics.getUsage (Keygate's): a GET, the apis as a repeated `apiId`. */
export const getUsageV1 = v1Route({
  operation: 'analytics.getUsage',
  method: 'GET',
  doc: { ...USAGE_DOC, errors: [...USAGE_DOC.errors], tag: 'analytics' },
  input: Type.Object({ ...usageInputFields, apiId: Type.Optional(ApiIdsParam) }),
  answer: UsageSummaryAnswer,
  handle: ({ apiId, granularity, ...query }, caller, deps) =>
    getUsage(deps, caller, {
      ...query,
      apiIds: apiId === undefined ? [] : Array.isArray(apiId) ? apiId : [apiId],
      granularity: granularity ?? 'day',
    }),
})
