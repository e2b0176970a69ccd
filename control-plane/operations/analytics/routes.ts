import type { ManagementRoute } from '../../management-route.js'

/** The analytics service in both wire formats. */
export const ANALYTICS_ROUTES: readonly ManagementRoute[] = []
