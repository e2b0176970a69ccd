import { closestName } from './closest-name.js'

/**
 * What a root key may be allowed to do, in one list: the control plane checks permissions against it and
 * `keygate root-key create` refuses anything else. A permission is `*` (everything), `api.<apiId|*>.<action|*>`
 * (an action on one api or on every api) or `rootkey.*.manage` (see MANAGE_ROOT_KEYS).
 */
export const ROOT_KEY_ACTIONS = [
  'create_api',
  'read_api',
  'delete_api',
  'create_key',
  'read_key',
  'update_key',
  'delete_key',
  'read_analytics',
] as const

export type RootKeyAction = (typeof ROOT_KEY_ACTIONS)[number]

/**
 * Managing root keys (rootKeys.*: create, list, revoke, roll). Root keys belong to no api, so the permission has
 * a scope of its own (`api.*.*` does not include it). It does not let a root key reach beyond itself: it creates,
 * revokes and rolls only root keys whose every permission it holds.
 */
export const MANAGE_ROOT_KEYS = 'rootkey.*.manage'

/** A well-formed root-key permission. */
export const ROOT_KEY_PERMISSION = new RegExp(
  `^(\\*|api\\.[A-Za-z0-9_*]+\\.(${ROOT_KEY_ACTIONS.join('|')}|\\*)|rootkey\\.\\*\\.manage)$`,
)

/** How a permission is written, for error messages. */
export const ROOT_KEY_PERMISSION_FORMAT = "'*' or api.<apiId|*>.<action> or rootkey.*.manage"

/**
 * Whether holding the permission `held` grants the permission `needed` (both well-formed): `*` grants everything;
 * otherwise the scope must be the same, and the id and the action each equal or `*` in `held`.
 */
export function grants(held: string, needed: string): boolean {
  if (held === '*') return true
  if (needed === '*') return false
  const [heldScope, heldId, heldAction] = held.split('.')
  const [neededScope, neededId, neededAction] = needed.split('.')
  return (
    heldScope === neededScope &&
    (heldId === '*' || heldId === neededId) &&
    (heldAction === '*' || heldAction === neededAction)
  )
}

/**
 * Why a permission is not well formed, listing the actions (and the one probably meant), or undefined when it
 * is: `… "create_keys" is not an action (did you mean create_key?); actions: create_api, …`.
 */
export function rootKeyPermissionProblem(permission: string): string | undefined {
  if (ROOT_KEY_PERMISSION.test(permission)) return undefined
  const parts = permission.split('.')
  const action = parts.length === 3 && parts[0] === 'api' ? parts[2]! : undefined
  const nearest = action && closestName(action, ROOT_KEY_ACTIONS)
  const which =
    action === undefined || (ROOT_KEY_ACTIONS as readonly string[]).includes(action) || action === '*'
      ? ''
      : `: ${JSON.stringify(action)} is not an action${nearest ? ` (did you mean ${nearest}?)` : ''}`
  return `${JSON.stringify(permission)} is not ${ROOT_KEY_PERMISSION_FORMAT}${which}; actions: ${ROOT_KEY_ACTIONS.join(', ')} or *`
}
