import type { ManagementRoute } from '../../management-route.js'

/** The root-keys service in both wire formats. */
export const ROOT_KEYS_ROUTES: readonly ManagementRoute[] = []
