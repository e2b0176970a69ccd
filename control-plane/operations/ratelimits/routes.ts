import type { ManagementRoute } from '../../management-route.js'

/** The ratelimits service in both wire formats. */
export const RATELIMITS_ROUTES: readonly ManagementRoute[] = []
