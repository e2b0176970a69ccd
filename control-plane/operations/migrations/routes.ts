import type { ManagementRoute } from '../../management-route.js'

/** The migrations service in both wire formats. */
export const MIGRATIONS_ROUTES: readonly ManagementRoute[] = []
