import type { ManagementRoute } from '../http/management-route.js'
import { createPortalV2 } from './create-portal.v2.js'
import { createSessionV2 } from './create-session.v2.js'
import { deletePortalV2 } from './delete-portal.v2.js'
import { getPortalV2 } from './get-portal.v2.js'
import { revokeSessionV2 } from './revoke-session.v2.js'
import { updatePortalV2 } from './update-portal.v2.js'

/** The portal's root-key routes (v2 only, as Unkey's portal). The session's are in session-routes.v2.ts. */
export const PORTAL_ROUTES: readonly ManagementRoute[] = [
  createPortalV2,
  getPortalV2,
  updatePortalV2,
  deletePortalV2,
  createSessionV2,
  revokeSessionV2,
]
