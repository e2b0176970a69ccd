import type { FastifyRequest } from 'fastify'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { principalOf } from './root-key-auth.js'

/**
 * Unkey's keys.createKey and updateKey upsert the identity of the externalId they are given, so that every key with
 * an externalId belongs to an identity (verifyKey answers it) without an identities.* call, and with no identity
 * permission asked of the root key. The identity is made empty (no meta, no limits) when none exists.
 */
export async function bindIdentity(deps: ControlPlaneDeps, request: FastifyRequest, externalId: string) {
  const { identity, created } = await deps.identities.upsert(externalId)
  if (!created) return
  request.log.info({ identityId: identity.id, rootKeyId: principalOf(request).rootKeyId }, 'identity created')
  await deps.audit.record(request, 'identities.createIdentity', { after: { ...identity } })
}
