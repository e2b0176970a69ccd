import { ApiError, problemOf, type ApiErrorDetails } from '../shared/errors.js'
import { isNamespaceId, type NamespaceRecord } from '../shared/ratelimit-namespace.js'
import type { ResourceAction } from '../shared/root-key-actions.js'
import type { NamespaceRef } from './ratelimit-namespaces.js'
import { requireNamespaceAction, type Principal } from './root-key-auth.js'

/**
 * What the override operations share: the namespace a call names, reached once the root key may, and the answers
 * for a namespace or an override that does not exist (Unkey v1's wording, v2's in `v2Detail`).
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
 * `hiddenAs`, the 403 carries the answer v2 gives in its place (v1 answers the 403).
 */
export function requireNamespace(
  principal: Principal,
  found: NamespaceRecord | null,
  action: ResourceAction<'ratelimit'>,
  ref: NamespaceRef,
  hiddenAs?: ApiErrorDetails['hiddenAs'],
): NamespaceRecord {
  const refusal = problemOf(() => requireNamespaceAction(principal, found?.id, action))
  if (refusal) throw hiddenAs ? new ApiError(refusal.code, refusal.message, undefined, { hiddenAs }) : refusal
  if (!found) {
    const text = namedAs(ref)
    throw new ApiError('NOT_FOUND', `Namespace ${text} not found`, undefined, {
      record: 'namespace',
      v2Detail: `namespace ${text} not found`,
    })
  }
  return found
}

/** How v2 says that `identifier` has no override. */
export const noOverrideFor = (identifier: string): string => `override for ${identifier} not found`

/** An override the call named that does not exist: `message` in Unkey v1's wording, v2's naming the identifier. */
export const overrideNotFound = (message: string, identifier: string): ApiError =>
  new ApiError('NOT_FOUND', message, undefined, { record: 'override', v2Detail: noOverrideFor(identifier) })
