import type { ManagementRoute } from '../../management-route.js'
import { createPortalV2 } from './create-portal.v2.js'
import { createSessionV2 } from './create-session.v2.js'
import { deletePortalV2 } from './delete-portal.v2.js'
import { getPortalV2 } from './get-portal.v2.js'
import { revokeSessionV2 } from './revoke-session.v2.js'
import { updatePortalV2 } from './update-portal.v2.js'

/** The portal's root-key routes (v2 only: Unkey's portal is a v2 service). The session's are in session-routes.ts. */
export const PORTAL_ROUTES: readonly ManagementRoute[] = [
  createPortalV2,
  getPortalV2,
  updatePortalV2,
  deletePortalV2,
  createSessionV2,
  revokeSessionV2,
]
