import type { ManagementRoute } from '../http/management-route.js'
import { getRatelimitsV2 } from './get-ratelimits.v2.js'
import { getUsageV1 } from './get-usage.v1.js'
import { getUsageV2 } from './get-usage.v2.js'
import { getVerificationsV1 } from './get-verifications.v1.js'
import { getVerificationsV2 } from './get-verifications.v2.js'

/**
 * The analytics service: v1's verification counts, v2's ClickHouse SQL over verifications and rate limits, and usage
 * summaries for billing on both.
 */
export const ANALYTICS_ROUTES: readonly ManagementRoute[] = [
  getVerificationsV1,
  getVerificationsV2,
  getRatelimitsV2,
  getUsageV1,
  getUsageV2,
]
