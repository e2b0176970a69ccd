import { badRequest, notFound } from '../../shared/errors/errors.js'
import type { StoredEntity } from '../../shared/entity.js'
import type { IdentityRecord } from '../../shared/identity.js'
import type { ResourceAction } from '../../shared/root-keys/root-key-actions.js'
import type { IdentityRef, Identities } from './identities.js'
import { requireAction, requireActionOn, type Principal } from '../root-keys/root-key-auth.js'

/** Unkey's identities have an environment that v1 can name but not set: every one is in this one. */
export const IDENTITY_ENVIRONMENT = 'default'

/** How a refusal names an identity the caller named by externalId: not by its id. */
const IDENTITY = '<the identity>'

/**
 * How a request names an identity, as Unkey's two versions do.
 * - By `identityId` or `externalId` (v1; the id wins when both are given). Named by externalId in an `environment`
 *   other than IDENTITY_ENVIRONMENT, it names none.
 * - By one string that is either (v2's `identity`): `idOrExternalId`, the identity with this id, else the one with
 *   this externalId.
 */
export type IdentityName = (IdentityRef & { environment?: string }) | { idOrExternalId: string }

/**
 * The identity a request names, once the root key may `action` on it: `identity.*.<action>` or
 * `identity.<its id>.<action>`. 404 if there is none.
 */
export async function allowedIdentity(
  identities: Identities,
  principal: Principal,
  name: IdentityName,
  action: ResourceAction<'identity'>,
): Promise<StoredEntity<IdentityRecord>> {
  return 'idOrExternalId' in name
    ? identityByIdOrExternalId(identities, principal, name.idOrExternalId, action)
    : identityByRef(identities, principal, name, action)
}

/**
 * Named by id, the check comes before the read; named by externalId, after it (on the record's id) — and a root key
 * without the wildcard learns nothing of an externalId it finds no identity for.
 */
async function identityByRef(
  identities: Identities,
  principal: Principal,
  ref: IdentityRef & { environment?: string },
  action: ResourceAction<'identity'>,
): Promise<StoredEntity<IdentityRecord>> {
  if (ref.identityId === undefined && ref.externalId === undefined)
    throw badRequest('Provide either identityId or externalId')
  if (ref.identityId !== undefined) requireAction(principal, 'identity', ref.identityId, action)
  const found = await identities.find(ref)
  // Named by externalId: the refusal does not name the identity's id, which the caller did not give.
  if (ref.identityId === undefined) requireActionOn(principal, 'identity', found?.doc.id ?? '*', IDENTITY, action)
  if (!found) throw notFound('identity', `identity ${ref.identityId ?? ref.externalId} not found`)
  if (ref.identityId === undefined && ref.environment !== undefined && ref.environment !== IDENTITY_ENVIRONMENT)
    throw notFound('identity', `identity ${ref.externalId} not found`)
  return found
}

/**
 * Checked on the record found — and a root key without the wildcard learns nothing of a name it finds no identity
 * for (403, not 404).
 */
async function identityByIdOrExternalId(
  identities: Identities,
  principal: Principal,
  identity: string,
  action: ResourceAction<'identity'>,
): Promise<StoredEntity<IdentityRecord>> {
  const found = await identities.named(identity)
  // The same refusal whether the identity exists or not, however it was named.
  requireActionOn(principal, 'identity', found?.doc.id ?? '*', IDENTITY, action)
  if (!found) throw notFound('identity', `identity ${identity} not found`)
  return found
}
