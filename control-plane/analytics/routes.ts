import type { ManagementRoute } from '../http/management-route.js'
import { getRatelimitsV2 } from './get-ratelimits.v2.js'
import { getVerificationsV1 } from './get-verifications.v1.js'
import { getVerificationsV2 } from './get-verifications.v2.js'

/** The analytics service: v1's verification counts, and v2's ClickHouse SQL over verifications and rate limits. */
export const ANALYTICS_ROUTES: readonly ManagementRoute[] = [getVerificationsV1, getVerificationsV2, getRatelimitsV2]
