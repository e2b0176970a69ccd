import { ApiError } from '../../shared/errors/errors.js'
import type { PortalScope } from '../../shared/portal/portal.js'
import type { RootKeyAction } from '../../shared/root-keys/root-key-actions.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { checkIdentityBinding } from '../keys/key-references.js'
import { can, type Principal } from '../root-keys/root-key-auth.js'

/**
 * What a root key must hold on every api of a session to give it each scope: a session never carries a capability
 * its minter lacks (Unkey's rule), and `keys:revoke`, Keygate's own, needs delete_key.
 */
export const SCOPE_NEEDS: Record<PortalScope, readonly RootKeyAction[]> = {
  'keys:read': ['read_key', 'read_api'],
  'keys:create': ['create_key'],
  'keys:reroll': ['create_key'],
  'keys:revoke': ['delete_key'],
  'analytics:read': ['read_analytics'],
}

/**
 * Refuses the whole request (403) when the root key lacks, on any of `apiIds`, what one of `scopes` needs: a missing
 * grant shows at once rather than as a broken portal later. The message names the scope, not the api.
 */
export function requireScopesHeld(
  principal: Principal,
  apiIds: readonly string[],
  scopes: readonly PortalScope[],
): void {
  for (const scope of scopes) {
    const missing = SCOPE_NEEDS[scope].filter((action) => apiIds.some((apiId) => !can(principal, apiId, action)))
    if (missing.length > 0) {
      throw new ApiError(
        'INSUFFICIENT_PERMISSIONS',
        `the root key cannot grant ${scope}: it needs api.<apiId>.${missing.join(' and api.<apiId>.')} on every api of the session`,
      )
    }
  }
}

/** The scopes whose calls give a key the session's identity: a new key (keys:create), a rolled one (keys:reroll). */
const BINDING_SCOPES: readonly PortalScope[] = ['keys:create', 'keys:reroll']

/**
 * Refuses (403) scopes that give keys the session's identity to a root key that may not do so itself: keys.createKey
 * and keys.rerollKey need the right to bind a key to the identity (identity-binding.ts), and a session minted
 * without it would be a way around that rule. Scopes that bind nothing need no identity right.
 */
export async function requireIdentityBindable(
  deps: Pick<ControlPlaneDeps, 'identities'>,
  principal: Principal,
  externalId: string,
  scopes: readonly PortalScope[],
): Promise<void> {
  if (scopes.some((scope) => BINDING_SCOPES.includes(scope))) await checkIdentityBinding(deps, principal, externalId)
}

/** The refusal of a portal call the session's scopes do not allow (Unkey's words). */
export function requireScope(scopes: readonly PortalScope[], scope: PortalScope): void {
  if (!scopes.includes(scope)) throw new ApiError('INSUFFICIENT_PERMISSIONS', `Missing permission: '${scope}'`)
}
