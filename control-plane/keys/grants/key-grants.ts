import { ApiError } from '../../../shared/errors/errors.js'
import type { ResourceAction } from '../../../shared/root-keys/root-key-actions.js'
import { may, type Principal } from '../../root-keys/root-key-auth.js'

/** A key's direct grants: the permissions and the roles it holds (by id). */
export type GrantField = 'permissions' | 'roles'

/** Whether replacing `held` with `next` takes any id away. */
export function takesAway(held: readonly string[] | undefined, next: readonly string[]): boolean {
  return (held ?? []).some((id) => !next.includes(id))
}

// Unkey's permission for each change.
const ACTIONS: Record<GrantField, { add: ResourceAction<'rbac'>; remove: ResourceAction<'rbac'> }> = {
  permissions: { add: 'add_permission_to_key', remove: 'remove_permission_from_key' },
  roles: { add: 'add_role_to_key', remove: 'remove_role_from_key' },
}

/** Unkey's rbac permissions for changing a key's permissions or roles: adding, and removing when any is taken away. */
export function allowKeyGrants(principal: Principal, field: GrantField, adds: boolean, removes: boolean): void {
  const needed = [...(adds ? [ACTIONS[field].add] : []), ...(removes ? [ACTIONS[field].remove] : [])]
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((action) => `rbac.*.${action}`).join(' and ')}`,
    )
  }
}
