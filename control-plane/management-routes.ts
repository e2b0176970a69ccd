import type { ManagementRoute } from './http/management-route.js'
import { ANALYTICS_ROUTES } from './analytics/routes.js'
import { APIS_ROUTES } from './apis/routes.js'
import { AUDIT_ROUTES } from './audit/routes.js'
import { IDENTITIES_ROUTES } from './identities/routes.js'
import { KEYS_ROUTES } from './keys/routes.js'
import { MIGRATIONS_ROUTES } from './migrations/routes.js'
import { PERMISSIONS_ROUTES } from './permissions/routes.js'
import { PORTAL_ROUTES } from './portal/routes.js'
import { RATELIMITS_ROUTES } from './ratelimits/routes.js'
import { ROOT_KEYS_ROUTES } from './root-keys/routes.js'
import { WEBHOOKS_ROUTES } from './webhooks/routes.js'

/**
 * Every management operation in every wire format: what the control plane serves behind its root-key hook (app.ts),
 * and what the API reference documents (openapi/operations.ts). One folder per service, one operation per file
 * with an adapter per wire format beside it.
 */
export const MANAGEMENT_ROUTES: readonly ManagementRoute[] = [
  ...APIS_ROUTES,
  ...KEYS_ROUTES,
  ...PERMISSIONS_ROUTES,
  ...MIGRATIONS_ROUTES,
  ...ANALYTICS_ROUTES,
  ...AUDIT_ROUTES,
  ...ROOT_KEYS_ROUTES,
  ...RATELIMITS_ROUTES,
  ...IDENTITIES_ROUTES,
  ...WEBHOOKS_ROUTES,
  ...PORTAL_ROUTES,
]
