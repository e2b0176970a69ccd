import { badRequest, notFound } from '../shared/errors.js'
import type { StoredEntity } from '../shared/entity.js'
import type { IdentityRecord } from '../shared/identity.js'
import type { ResourceAction } from '../shared/root-key-actions.js'
import type { IdentityRef, Identities } from './identities.js'
import { requireAction, type Principal } from './root-key-auth.js'

/**
 * The identity a request names, once the root key may `action` on it: `identity.*.<action>` or
 * `identity.<its id>.<action>`. Named by id, the check comes before the read; named by externalId, after it (on
 * the record's id) — and a root key without the wildcard learns nothing of an externalId it finds no identity for.
 */
export async function allowedIdentity(
  identities: Identities,
  principal: Principal,
  ref: IdentityRef,
  action: ResourceAction<'identity'>,
): Promise<StoredEntity<IdentityRecord>> {
  if (ref.identityId === undefined && ref.externalId === undefined)
    throw badRequest('Provide either identityId or externalId')
  if (ref.identityId !== undefined) requireAction(principal, 'identity', ref.identityId, action)
  const found = await identities.find(ref)
  if (ref.identityId === undefined) requireAction(principal, 'identity', found?.doc.id ?? '*', action)
  if (!found) throw notFound(`identity ${ref.identityId ?? ref.externalId} not found`)
  return found
}
