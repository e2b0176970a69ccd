import type { ManagementRoute } from '../../management-route.js'

/** The permissions service in both wire formats. */
export const PERMISSIONS_ROUTES: readonly ManagementRoute[] = []
