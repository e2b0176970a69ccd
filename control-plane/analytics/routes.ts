import type { ManagementRoute } from '../http/management-route.js'
import { getVerificationsV1 } from './get-verifications.v1.js'

/** The analytics service: v1 only. */
export const ANALYTICS_ROUTES: readonly ManagementRoute[] = [getVerificationsV1]
