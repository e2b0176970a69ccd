import { closestName } from '../closest-name.js'
import { clipInput } from '../clip-input.js'

/**
 * What a root key may be allowed to do, in one table: the control plane checks permissions against it and
 * `keygate root-key create` refuses anything else. A permission is `*` (everything) or
 * `<resource>.<id|*>.<action|*>`: an action on one record of the resource (an api, a rate-limit namespace…) or on
 * every one. The resources and actions are Unkey's, so root-key permissions written for Unkey work unchanged;
 * `webhook` and `rootkey.*.manage` are Keygate's own (see MANAGE_ROOT_KEYS).
 */
export const ROOT_KEY_RESOURCES = {
  api: [
    'create_api',
    'read_api',
    'update_api',
    'delete_api',
    'create_key',
    'read_key',
    'update_key',
    'delete_key',
    'verify_key',
    'read_analytics',
    // v2's: Keygate keeps only hashes, so these allow nothing, but root-key permissions written for Unkey v2 hold
    // them and must be accepted as written.
    'encrypt_key',
    'decrypt_key',
    // Keygate's own: keys.reportLeak, for a scanner's root key that may do nothing else to keys.
    'report_leak',
  ],
  rbac: [
    'create_permission',
    'read_permission',
    'update_permission',
    'delete_permission',
    'create_role',
    'read_role',
    'update_role',
    'delete_role',
    'add_permission_to_key',
    'remove_permission_from_key',
    'add_role_to_key',
    'remove_role_from_key',
    'add_permission_to_role',
    'remove_permission_from_role',
  ],
  identity: ['create_identity', 'read_identity', 'update_identity', 'delete_identity'],
  ratelimit: [
    'limit',
    'create_namespace',
    'read_namespace',
    'update_namespace',
    'delete_namespace',
    'set_override',
    'read_override',
    'delete_override',
    'list_overrides',
    // Reads analytics.getRatelimits' rows of the namespace (`*`: of every namespace).
    'read_analytics',
  ],
  // Keygate's own: webhook endpoints and their events. `webhook.*.<action>` or `webhook.<endpointId>.<action>`
  // (create_endpoint only on `*`: a new endpoint has no id yet).
  // send_test: webhooks.sendTest, an example event (no real data) to one endpoint.
  webhook: ['create_endpoint', 'read_endpoint', 'update_endpoint', 'delete_endpoint', 'replay', 'send_test'],
  // Portals and their sessions (`portal.*.<action>` or `portal.<portalId>.<action>`; create_portal only on `*`).
  // create_portal_session is Unkey's; the others are Keygate's, which manages portals through the API too.
  portal: [
    'create_portal',
    'read_portal',
    'update_portal',
    'delete_portal',
    'create_portal_session',
    'revoke_portal_session',
  ],
  rootkey: ['manage'],
} as const

export type RootKeyResource = keyof typeof ROOT_KEY_RESOURCES
export type ResourceAction<R extends RootKeyResource> = (typeof ROOT_KEY_RESOURCES)[R][number]

/** The actions on apis and their keys (`api.<apiId|*>.<action>`). */
export const ROOT_KEY_ACTIONS = ROOT_KEY_RESOURCES.api
export type RootKeyAction = ResourceAction<'api'>

/**
 * Managing root keys (rootKeys.*: create, list, revoke, roll). Root keys belong to no api, so the permission has
 * a scope of its own (`api.*.*` does not include it). It does not let a root key reach beyond itself: it creates,
 * revokes and rolls only root keys whose every permission it holds.
 */
export const MANAGE_ROOT_KEYS = 'rootkey.*.manage'

const RESOURCE_NAMES = Object.keys(ROOT_KEY_RESOURCES) as RootKeyResource[]

/** A well-formed root-key permission. */
export const ROOT_KEY_PERMISSION = new RegExp(
  `^(\\*|${RESOURCE_NAMES.map((resource) =>
    resource === 'rootkey'
      ? 'rootkey\\.\\*\\.manage'
      : `${resource}\\.[A-Za-z0-9_*]+\\.(${ROOT_KEY_RESOURCES[resource].join('|')}|\\*)`,
  ).join('|')})$`,
)

/** How a permission is written, for error messages. */
export const ROOT_KEY_PERMISSION_FORMAT =
  "'*' or <resource>.<id|*>.<action> (resources: api, rbac, identity, ratelimit, webhook, portal) or rootkey.*.manage"

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
 * Why a permission is not well formed, listing the actions of its resource (and the one probably meant), or
 * undefined when it is: `… "create_keys" is not an action of api (did you mean create_key?); actions: …`.
 */
export function rootKeyPermissionProblem(permission: string): string | undefined {
  if (ROOT_KEY_PERMISSION.test(permission)) return undefined
  const parts = permission.split('.')
  const resource = RESOURCE_NAMES.find((name) => name === parts[0])
  if (parts.length !== 3 || resource === undefined) {
    return `${JSON.stringify(clipInput(permission))} is not ${ROOT_KEY_PERMISSION_FORMAT}`
  }
  const actions: readonly string[] = ROOT_KEY_RESOURCES[resource]
  const action = parts[2]!
  const nearest = closestName(action, actions)
  const which =
    actions.includes(action) || action === '*'
      ? ''
      : `: ${JSON.stringify(clipInput(action))} is not an action of ${resource}${nearest ? ` (did you mean ${nearest}?)` : ''}`
  return `${JSON.stringify(clipInput(permission))} is not ${ROOT_KEY_PERMISSION_FORMAT}${which}; actions of ${resource}: ${actions.join(', ')} or *`
}
