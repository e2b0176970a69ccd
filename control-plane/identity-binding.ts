import type { Caller } from './caller.js'
import { ApiError } from '../shared/errors.js'
import { may } from '../shared/root-key-principal.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { type Principal } from './root-key-auth.js'

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
export async function bindIdentity(deps: ControlPlaneDeps, caller: Caller, externalId: string) {
  const principal = caller.principal
  const { identity, created } = await deps.identities.upsert(externalId)
  if (!created) {
    if (!may(principal, 'identity', identity.id, 'read_identity')) throw refused()
    return
  }
  caller.log.info({ identityId: identity.id, rootKeyId: principal.rootKeyId }, 'identity created')
  await deps.audit.record(caller, 'identities.createIdentity', { after: { ...identity } })
}
