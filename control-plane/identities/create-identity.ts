import type { IdentityRecord } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { checkMeta, namedLimitsOf, type NamedLimitInput } from '../keys/key-fields.js'
import { requireAction } from '../root-keys/root-key-auth.js'

export interface CreateIdentityInput {
  externalId: string
  meta?: Record<string, unknown>
  ratelimits?: readonly NamedLimitInput[]
}

/**
 * Creates an identity: the root key's `identity.*.create_identity`, then its meta and limits; 409 CONFLICT if one
 * has its externalId.
 */
export async function createIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateIdentityInput,
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
