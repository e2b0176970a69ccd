import { v2Route } from '../http/management-route.js'
import { PortalData, toPortalData } from './wire/portal-schemas.js'
import { getPortal } from './get-portal.js'
import { PortalNamedBody } from './wire/portal-bodies.js'

export const getPortalV2 = v2Route({
  operation: 'portal.getPortal',
  doc: {
    summary: 'A portal, by id or slug',
    description: "Keygate's own. Needs `portal.<id>.read_portal`.",
    tag: 'v2 portal',
  },
  body: PortalNamedBody,
  data: PortalData,
  handle: async ({ portal }, caller, deps) => ({ data: toPortalData(await getPortal(deps, caller, portal)) }),
})
