import { v2Route } from '../http/management-route.js'
import { V2_CREDIT_WORDING } from '../keys/wire/credit-wording.v2.js'
import { PortalData, toPortalData } from './wire/portal-schemas.js'
import { UpdatePortalBody } from './wire/portal-bodies.js'
import { updatePortal } from './update-portal.js'

export const updatePortalV2 = v2Route({
  operation: 'portal.updatePortal',
  doc: {
    summary: 'Change a portal: its apis, branding, key defaults, or turn it off',
    description: "Keygate's own. Needs `portal.<id>.update_portal`. Its sessions see the change on their next call.",
    tag: 'v2 portal',
  },
  body: UpdatePortalBody,
  data: PortalData,
  // Key defaults are checked as v2's keys.createKey checks a key, and worded as it words them.
  wording: V2_CREDIT_WORDING,
  handle: async (input, caller, deps) => ({ data: toPortalData(await updatePortal(deps, caller, input)) }),
})
