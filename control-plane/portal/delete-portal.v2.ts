import { Type } from 'typebox'
import { v2Route } from '../http/management-route.js'
import { deletePortal } from './delete-portal.js'
import { PortalNamedBody } from './wire/portal-bodies.js'

export const deletePortalV2 = v2Route({
  operation: 'portal.deletePortal',
  doc: {
    summary: 'Delete a portal: its sessions end; the keys made in it stay',
    description: "Keygate's own. Needs `portal.<id>.delete_portal`.",
    tag: 'v2 portal',
  },
  body: PortalNamedBody,
  data: Type.Object({}),
  handle: async ({ portal }, caller, deps) => {
    await deletePortal(deps, caller, portal)
    return { data: {} }
  },
})
