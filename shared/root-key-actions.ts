/**
 * What a root key may be allowed to do, in one list: the control plane checks permissions against it and
 * `keygate root-key create` refuses anything else. A permission is `*` (everything) or
 * `api.<apiId|*>.<action|*>`.
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

/** A well-formed root-key permission. */
export const ROOT_KEY_PERMISSION = new RegExp(`^(\\*|api\\.[A-Za-z0-9_*]+\\.(${ROOT_KEY_ACTIONS.join('|')}|\\*))$`)

/** How a permission is written, for error messages. */
export const ROOT_KEY_PERMISSION_FORMAT = "'*' or api.<apiId|*>.<action>"
