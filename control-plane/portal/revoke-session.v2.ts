import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { revokeSession } from './revoke-session.js'

export const revokeSessionV2 = v2Route({
  operation: 'portal.revokeSession',
  doc: {
    summary: 'End a portal session at once (its cookie and unspent code stop working)',
    description: "Keygate's own. Needs `portal.<the session's portal>.revoke_portal_session`.",
    tag: 'v2 portal',
  },
  body: Type.Object(
    { sessionId: Type.String({ minLength: 1, maxLength: 64, description: 'The `id` portal.createSession answered' }) },
    { additionalProperties: false, examples: [{ sessionId: WIRE_EXAMPLES.portalSessionId }] },
  ),
  data: Type.Object({}),
  handle: async ({ sessionId }, caller, deps) => {
    await revokeSession(deps, caller, sessionId)
    return { data: {} }
  },
})
