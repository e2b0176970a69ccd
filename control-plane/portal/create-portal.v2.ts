import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { V2_CREDIT_WORDING } from '../keys/wire/credit-wording.v2.js'
import { createPortal } from './create-portal.js'
import { CreatePortalBody } from './wire/portal-bodies.js'

/** Keygate's portal.createPortal (Unkey makes portals in its dashboard): a portal over some apis. */
export const createPortalV2 = v2Route({
  operation: 'portal.createPortal',
  doc: {
    summary: 'Create a customer portal over some apis: its branding and what every key made in it gets',
    description:
      "Keygate's own. Needs `portal.*.create_portal` and read_api on each api. Sessions are minted with portal.createSession.",
    tag: 'v2 portal',
  },
  body: CreatePortalBody,
  data: Type.Object({ portalId: Type.String({ description: "The portal's id (`portal_…`)" }) }),
  // Key defaults are checked as v2's keys.createKey checks a key, and worded as it words them.
  wording: V2_CREDIT_WORDING,
  handle: async (input, caller, deps) => ({ data: { portalId: (await createPortal(deps, caller, input)).id } }),
})
