import type { IdentityRecord } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { allowedIdentity, type IdentityName } from './identity-access.js'
import { UsageThresholdIndex } from '../analytics/usage-threshold-index.js'

/** Deletes the identity `name` names, if the root key may: its keys keep their externalId; 404 if there is none. */
export async function deleteIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  name: IdentityName,
): Promise<IdentityRecord> {
  const found = await allowedIdentity(deps.identities, caller.principal, name, 'delete_identity')
  // One write: its keys keep their externalId and, on every verifier within the bound, lose its meta and limits.
  const identity = await deps.identities.delete(found.doc.id)
  if (identity.usageThresholds !== undefined) {
    const subject = { identity: identity.externalId }
    // One re-created under the same externalId may hold thresholds of its own by now.
    await new UsageThresholdIndex(deps.store.entities).afterClearing(
      subject,
      async () => (await deps.identities.byExternalId(identity.externalId))?.doc.usageThresholds,
    )
  }
  caller.log.info({ identityId: identity.id, rootKeyId: caller.principal.rootKeyId }, 'identity deleted')
  await deps.audit.record(caller, 'identities.deleteIdentity', { before: { ...identity } })
  return identity
}
