import { notFound } from '../../shared/errors.js'
import type { RootKeyAction } from '../../shared/root-key-actions.js'
import { can, type Principal } from '../root-key-auth.js'

/**
 * Unkey v2's rule for apis.listKeys and keys.createKey: a root key that may not do `actions` on the api learns
 * nothing of it, and gets the answer of an api that does not exist (404, api_not_found) rather than a 403 that would
 * tell it the api is there. Checked before the api is looked up, so both answers are the same call.
 */
export function requireVisibleApi(principal: Principal, apiId: string, ...actions: RootKeyAction[]): void {
  if (!actions.every((action) => can(principal, apiId, action))) throw notFound('api', `api ${apiId} not found`)
}
