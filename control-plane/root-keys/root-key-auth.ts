import { ApiError, concealing } from '../../shared/errors/errors.js'
import { grants, MANAGE_ROOT_KEYS, type RootKeyAction } from '../../shared/root-keys/root-key-actions.js'
import {
  BOOTSTRAP_ID,
  may,
  mayOnSome,
  requireAction,
  requireActionOn,
  requireNamespaceAction,
  type Principal,
} from '../../shared/root-keys/root-key-principal.js'

export { BOOTSTRAP_ID, may, mayOnSome, requireAction, requireActionOn, requireNamespaceAction, type Principal }

/** How a refusal names the api of a key the caller named by id (requireKeyPermission says why). */
const KEY_API = "<the key's api>"

/** Whether the principal may do `action` on `apiId` (`*` = on every api). */
export function can(principal: Principal, apiId: string, action: RootKeyAction): boolean {
  return may(principal, 'api', apiId, action)
}

/** Throws the contract's 403 unless the principal may do every one of `actions` on `apiId`. */
export function requirePermission(principal: Principal, apiId: string, ...actions: RootKeyAction[]): void {
  requireAction(principal, 'api', apiId, ...actions)
}

/**
 * requirePermission on an api the caller named, for an operation whose v2 form hides the api from a root key that
 * may not use it: the 403 conceals the api, which v2 answers as the api's 404 (Unkey v2's rule for keys.createKey,
 * apis.listKeys).
 */
export function requireHiddenApiPermission(principal: Principal, apiId: string, ...actions: RootKeyAction[]): void {
  concealing({ record: 'api', name: apiId }, () => requirePermission(principal, apiId, ...actions))
}

/**
 * Throws the contract's 403 unless the principal may do every one of `actions` on the api of `key`, a key the caller
 * named by id. The refusal does not name that api: a root key with no right on it would learn which api the key is
 * in (a key that does not exist is a 404 before this, so the 403 says only that it exists).
 */
export function requireKeyPermission(principal: Principal, key: { apiId: string }, ...actions: RootKeyAction[]): void {
  requireActionOn(principal, 'api', key.apiId, KEY_API, ...actions)
}

/**
 * Throws the contract's 403 unless the principal may do one of `actions` on `apiId` (where Unkey's name differs);
 * `shownAs` names the api in the refusal when the caller did not name it (requireKeyPermission's reason).
 */
export function requireOneOf(
  principal: Principal,
  apiId: string,
  actions: readonly RootKeyAction[],
  shownAs = apiId,
): void {
  if (actions.some((action) => can(principal, apiId, action))) return
  throw new ApiError(
    'INSUFFICIENT_PERMISSIONS',
    `the root key needs ${actions.map((action) => `api.${shownAs}.${action}`).join(' or ')}`,
  )
}

/** requireOneOf on the api of a key the caller named by id (requireKeyPermission's reason). */
export function requireOneOfOnKey(principal: Principal, key: { apiId: string }, actions: readonly RootKeyAction[]) {
  requireOneOf(principal, key.apiId, actions, KEY_API)
}

/**
 * Throws the contract's 403 unless the principal may manage root keys (MANAGE_ROOT_KEYS) and holds every one of
 * `permissions`: those of the root key it creates, revokes or rolls. No root key can make or take over a root
 * key stronger than itself. (Revoking itself needs neither: rootKeys.revokeRootKey lets any root key do that.)
 */
export function requireRootKeyManagement(principal: Principal, permissions: readonly string[] = []): void {
  const needed = [...new Set([MANAGE_ROOT_KEYS, ...permissions])]
  const missing = needed.filter((permission) => !principal.permissions.some((held) => grants(held, permission)))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.join(' and ')}` +
        (missing.some((permission) => permission !== MANAGE_ROOT_KEYS)
          ? ' (a root key creates, revokes and rolls only root keys whose every permission it holds)'
          : ''),
    )
  }
}
