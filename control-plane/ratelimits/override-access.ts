import { ApiError, concealing, type RecordRef } from '../../shared/errors/errors.js'
import { isNamespaceId, type NamespaceRecord } from '../../shared/ratelimits/ratelimit-namespace.js'
import type { ResourceAction } from '../../shared/root-keys/root-key-actions.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'
import { requireNamespaceAction, type Principal } from '../root-keys/root-key-auth.js'

/**
 * What the override operations share: the namespace a call names, reached once the root key may, and the answers
 * for a namespace or an override that does not exist (in Unkey v1's words; each names what the call named, which
 * v2's words say).
 */

/** The text a call named its namespace by, as its answers quote it. */
const namedAs = (ref: NamespaceRef): string => ('id' in ref ? ref.id : 'name' in ref ? ref.name : ref.nameOrId)

/**
 * The name under which a namespace not found is made by the call's first use, if it may be: none when the call
 * named an id (only a namespace already made has one).
 */
export function firstUseName(ref: NamespaceRef): string | undefined {
  if ('name' in ref) return ref.name
  return 'nameOrId' in ref && !isNamespaceId(ref.nameOrId) ? ref.nameOrId : undefined
}

/**
 * The namespace found (null: none) once the root key may do `action` on it. One that does not exist is a 404 — a
 * 403 for a root key that may not do the action on every namespace: it learns nothing of which exist. With
 * `conceals`, the 403 conceals that record (v2 answers it as the record's absence, v1 the 403).
 */
export function requireNamespace(
  principal: Principal,
  found: NamespaceRecord | null,
  action: ResourceAction<'ratelimit'>,
  ref: NamespaceRef,
  conceals?: RecordRef,
): NamespaceRecord {
  const check = () => requireNamespaceAction(principal, found?.id, action)
  if (conceals) concealing(conceals, check)
  else check()
  if (!found) {
    const name = namedAs(ref)
    throw new ApiError('NOT_FOUND', `Namespace ${name} not found`, undefined, { record: 'namespace', name })
  }
  return found
}

/** The override of `identifier`, as a record a call names. */
export const overrideOf = (identifier: string): RecordRef => ({ record: 'override', name: identifier })

/** An override the call named that does not exist: `message` in Unkey v1's wording (v2's names the identifier). */
export const overrideNotFound = (message: string, identifier: string): ApiError =>
  new ApiError('NOT_FOUND', message, undefined, { record: 'override', name: identifier })
