import type { ManagementRoute } from '../../management-route.js'

/** The identities service in both wire formats. */
export const IDENTITIES_ROUTES: readonly ManagementRoute[] = []
