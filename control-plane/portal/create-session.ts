import { invalid } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { PORTAL_CODE_TTL_MS, type PortalScope, type PortalSession } from '../../shared/portal/portal.js'
import { newPortalSecret } from '../../shared/portal/portal-secrets.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireIdentityBindable, requireScopesHeld } from './portal-scopes.js'
import { portalDisabled } from './portal-errors.js'
import { requirePortal } from './session/portal-access.js'

export interface CreateSessionInput {
  portal: string
  externalId: string
  scopes: PortalScope[]
  preview?: boolean | undefined
  returnUrl?: string | undefined
  /** Keygate's: only these of the portal's apis (default: all of them). */
  apiIds?: string[] | undefined
}

/**
 * Mints a session for one customer (externalId) of a portal, as Unkey's portal.createSession does. In order: the root
 * key's `portal.<id>.create_portal_session` (404 whether or not the portal exists), the portal enabled (403), the
 * apis asked for within the portal's (400), every scope backed by the root key's own rights on every api of the
 * session (403 for the whole request), and keys:create or keys:reroll by its right to give keys the customer's
 * identity (403, as keys.createKey), the return URL http(s) (400). Answers the session and its one-time code, which
 * only the answer ever holds: the store keeps its SHA-256.
 */
export async function createSession(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateSessionInput,
): Promise<{ session: PortalSession; code: string }> {
  const portal = await requirePortal(deps, caller, input.portal, 'create_portal_session')
  if (!portal.enabled) throw portalDisabled()
  const apiIds = input.apiIds ?? portal.apiIds
  const outside = apiIds.find((apiId) => !portal.apiIds.includes(apiId))
  if (outside !== undefined) throw invalid('apiIds', `${outside} is not one of the portal's apis`)
  requireScopesHeld(caller.principal, apiIds, input.scopes)
  await requireIdentityBindable(deps, caller.principal, input.externalId, input.scopes)
  if (input.returnUrl !== undefined && !isHttpUrl(input.returnUrl))
    throw invalid('returnUrl', 'must be an absolute http(s) URL')
  const now = deps.clock.now()
  const { secret: code, hash } = newPortalSecret('pst')
  const session: PortalSession = {
    id: newId('ps', now),
    portalId: portal.id,
    externalId: input.externalId,
    scopes: input.scopes,
    apiIds,
    preview: input.preview ?? false,
    ...(input.returnUrl !== undefined ? { returnUrl: input.returnUrl } : {}),
    mintedBy: caller.principal.rootKeyId,
    createdAt: now,
    codeExpiresAt: now + PORTAL_CODE_TTL_MS,
  }
  await deps.store.portalSessions.createSession(session, hash)
  caller.log.info(
    { portalSessionId: session.id, portalId: portal.id, rootKeyId: session.mintedBy },
    'portal session created',
  )
  await deps.audit.record(caller, 'portal.createSession', {
    after: {
      sessionId: session.id,
      portalId: portal.id,
      slug: portal.slug,
      externalId: session.externalId,
      scopes: session.scopes,
      apiIds,
    },
  })
  return { session, code }
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return url.protocol === 'https:' || url.protocol === 'http:'
  } catch {
    return false
  }
}
