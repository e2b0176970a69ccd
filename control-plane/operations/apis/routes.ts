import type { ManagementRoute } from '../../management-route.js'

/** The apis service in both wire formats. */
export const APIS_ROUTES: readonly ManagementRoute[] = []
