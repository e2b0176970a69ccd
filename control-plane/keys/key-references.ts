import { ApiError } from '../../shared/errors/errors.js'
import { may } from '../../shared/root-keys/root-key-principal.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyGrants, MissingGrantNames } from '../permissions/rbac.js'
import type { Principal } from '../root-keys/root-key-auth.js'

/**
 * What a key refers to by name rather than by id: the identity of its externalId, and the permission and role
 * records of its `permissions` and `roles`. Each is checked before any is made, so that a call refused for one
 * leaves nothing behind for the others.
 */

/**
 * Makes what a new key refers to, in order: the right to bind its externalId's identity (checked), its permissions
 * and roles (looked up, refused or created by `missing`'s rule), then the identity (made when missing). Answers the
 * key's grants.
 */
export async function madeReferences(
  deps: Pick<ControlPlaneDeps, 'identities' | 'rbac' | 'audit'>,
  caller: Caller,
  key: { ownerId?: string | undefined; permissions?: readonly string[] | undefined; roles?: readonly string[] },
  missing: MissingGrantNames,
): Promise<KeyGrants> {
  const { ownerId } = key
  if (ownerId !== undefined) await checkIdentityBinding(deps, caller.principal, ownerId)
  const grants = await deps.rbac.grantsOfNames(key, missing, caller.principal)
  if (ownerId !== undefined) await bindIdentity(deps, caller, ownerId)
  return grants
}

/**
 * One answer whether the identity exists or not: a root key that may neither read it nor create identities learns
 * nothing of it (not its id, not whether it is there).
 */
const refused = () =>
  new ApiError(
    'INSUFFICIENT_PERMISSIONS',
    'the root key needs identity.*.read_identity to give a key an identity that exists (externalId), ' +
      'or identity.*.create_identity to create it',
  )

/**
 * Whether a root key may give a key the identity of `externalId`. A key bound to an identity answers its meta in
 * verifyKey and spends its shared limits, so binding is acting on the identity: it needs the right to read one that
 * exists (`identity.*.read_identity` or `identity.<its id>.read_identity`), and to create identities
 * (`identity.*.create_identity`) when there is none. Unkey asks for no identity right here; an api-scoped root key
 * could then attach keys to another team's identity. Checked before anything is written for the call.
 */
export async function checkIdentityBinding(
  deps: Pick<ControlPlaneDeps, 'identities'>,
  principal: Principal,
  externalId: string,
): Promise<void> {
  const existing = await deps.identities.byExternalId(externalId)
  const allowed = existing
    ? may(principal, 'identity', existing.doc.id, 'read_identity')
    : may(principal, 'identity', '*', 'create_identity')
  if (!allowed) throw refused()
}

/**
 * keys.createKey and updateKey give a key the identity of the externalId they are given, upserting it (as Unkey's
 * do), so that every key with an externalId belongs to an identity that verifyKey answers. The identity is made
 * empty (no meta, no limits) when none exists. The caller has run checkIdentityBinding first; an identity another
 * call created since is bound only if the root key may read it.
 */
export async function bindIdentity(
  deps: Pick<ControlPlaneDeps, 'identities' | 'audit'>,
  caller: Caller,
  externalId: string,
): Promise<void> {
  const principal = caller.principal
  const { identity, created } = await deps.identities.upsert(externalId)
  if (!created) {
    if (!may(principal, 'identity', identity.id, 'read_identity')) throw refused()
    return
  }
  caller.log.info({ identityId: identity.id, rootKeyId: principal.rootKeyId }, 'identity created')
  await deps.audit.record(caller, 'identities.createIdentity', { after: { ...identity } })
}
