import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { v2Route } from '../http/management-route.js'
import { PortalApiIds, PortalRef, PortalScopes } from './wire/portal-schemas.js'
import { EXTERNAL_ID } from '../keys/wire/key-bodies.v2.js'
import { createSession } from './create-session.js'

const CreateSessionBody = Type.Object(
  {
    portal: PortalRef(),
    externalId: Type.String({
      ...EXTERNAL_ID,
      description: 'The customer: their id in your system (the keys’ externalId)',
    }),
    scopes: PortalScopes(),
    preview: Type.Optional(Type.Boolean({ description: 'A session for trying the portal out (default false)' })),
    returnUrl: Type.Optional(
      Type.String({ maxLength: 500, description: 'Where the page’s “Back” link goes: an absolute http(s) URL' }),
    ),
    apiIds: Type.Optional({
      ...PortalApiIds(),
      description: "Keygate's: only these of the portal's apis (default: all of them)",
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        portal: WIRE_EXAMPLES.portalSlug,
        externalId: 'user_123',
        scopes: ['keys:read', 'keys:create', 'analytics:read'],
      },
    ],
  },
)

/**
 * Unkey's portal.createSession: a session for one customer, and the URL (with its one-time code, 15 minutes) to send
 * them to. The URL is PORTAL_URL (the control plane's /portal/ by default) with `?code=`.
 */
export const createSessionV2 = v2Route({
  operation: 'portal.createSession',
  doc: {
    summary: 'Mint a portal session for one customer; redirect them to the URL it answers',
    description:
      'Needs `portal.<id>.create_portal_session` (404 without it, as for no portal) and, for each scope, the rights it gives on every api of the session: keys:read read_key and read_api, keys:create and keys:reroll create_key (and, as keys.createKey asks, the right to give keys the externalId’s identity: read_identity on it, or create_identity when there is none), keys:revoke delete_key, analytics:read read_analytics (403 for the whole request otherwise). The answer carries a secret: it is sent with `Cache-Control: no-store`.',
    tag: 'v2 portal',
  },
  body: CreateSessionBody,
  data: Type.Object({
    id: Type.String({
      description: 'The session’s id (`ps_…`): not a credential, safe to log; portal.revokeSession takes it',
    }),
    url: Type.String({ description: 'Where to send the customer: it carries a one-time code valid for 15 minutes' }),
  }),
  handle: async (input, caller, deps) => {
    const { session, code } = await createSession(deps, caller, input)
    const url = new URL(deps.portalUrl)
    url.searchParams.set('code', code)
    return { data: { id: session.id, url: url.toString() } }
  },
})
