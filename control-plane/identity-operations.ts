import type { Caller } from './caller.js'
import type { IdentityRecord, NamedRateLimit } from '../shared/identity.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { checkMeta } from './meta-limits.js'
import { namedLimitsOf, type NamedLimitInput } from './named-limits.js'
import { requireAction } from './root-key-auth.js'

/**
 * Identities as both wire formats (v1, v2) write them: the root key's permission, the input's limits, the store,
 * the log and the audit entry. Finding the identity a request names is the wire format's (identity-access.ts).
 */

/** Creates an identity; 409 CONFLICT if one has its externalId. */
export async function createIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: { externalId: string; meta?: Record<string, unknown>; ratelimits?: readonly NamedLimitInput[] },
): Promise<IdentityRecord> {
  const principal = caller.principal
  requireAction(principal, 'identity', '*', 'create_identity')
  checkMeta(input.meta)
  const ratelimits = input.ratelimits && namedLimitsOf(input.ratelimits)
  const identity = await deps.identities.create({ externalId: input.externalId, meta: input.meta, ratelimits })
  caller.log.info({ identityId: identity.id, rootKeyId: principal.rootKeyId }, 'identity created')
  await deps.audit.record(caller, 'identities.createIdentity', { after: { ...identity } })
  return identity
}

/**
 * Replaces what is given of an identity's meta (`{}` clears it) and limits (`[]` removes them): one write however
 * much changes, and every key of the identity follows, on every verifier, within the bound.
 */
export async function updateIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  identityId: string,
  change: { meta?: Record<string, unknown>; ratelimits?: NamedRateLimit[] },
): Promise<IdentityRecord> {
  const { meta, ratelimits } = change
  let before: IdentityRecord | undefined
  const after = await deps.identities.update({ identityId }, (current) => {
    before = current
    const next: IdentityRecord = { ...current }
    if (meta !== undefined) {
      if (Object.keys(meta).length > 0) next.meta = meta
      else delete next.meta
    }
    if (ratelimits !== undefined) {
      if (ratelimits.length > 0) next.ratelimits = ratelimits
      else delete next.ratelimits
    }
    return next
  })
  caller.log.info({ identityId: after.id, rootKeyId: caller.principal.rootKeyId }, 'identity updated')
  await deps.audit.record(caller, 'identities.updateIdentity', { before: { ...before }, after: { ...after } })
  return after
}

/** Deletes an identity (its keys keep their externalId and lose its meta and limits); 404 if there is none. */
export async function deleteIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  identityId: string,
): Promise<IdentityRecord> {
  // One write: its keys keep their externalId and, on every verifier within the bound, lose its meta and limits.
  const identity = await deps.identities.delete(identityId)
  caller.log.info({ identityId, rootKeyId: caller.principal.rootKeyId }, 'identity deleted')
  await deps.audit.record(caller, 'identities.deleteIdentity', { before: { ...identity } })
  return identity
}
