import type { ManagementRoute } from '../../management-route.js'

/** The audit service in both wire formats. */
export const AUDIT_ROUTES: readonly ManagementRoute[] = []
