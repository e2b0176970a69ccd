import { v2Route } from '../../management-route.js'
import { PortalData, toPortalData } from '../../schemas/portal-schemas.js'
import { UpdatePortalBody } from './portal-bodies.js'
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
  handle: async (input, caller, deps) => ({ data: toPortalData(await updatePortal(deps, caller, input)) }),
})
