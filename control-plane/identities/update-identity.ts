import type { IdentityRecord, NamedRateLimit } from '../../shared/identity.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { allowedIdentity, type IdentityName } from './identity-access.js'
import { checkMeta, namedLimitsOf, type NamedLimitInput } from '../keys/key-fields.js'
import { normalisedThresholds, type UsageThreshold } from '../../shared/usage-threshold.js'
import { UsageThresholdIndex } from '../analytics/usage-threshold-index.js'

export interface UpdateIdentityInput {
  identity: IdentityName
  /** Replaces its meta; `{}` clears it, left out keeps it. */
  meta?: Record<string, unknown>
  /** Replaces its limits; `[]` removes them, left out keeps them. */
  ratelimits?: readonly NamedLimitInput[]
  /** Replaces its usage thresholds; `[]` removes them, left out keeps them. */
  usageThresholds?: readonly UsageThreshold[]
  /**
   * When duplicate limit names and oversized meta are refused. `before-lookup`: before the identity is looked up
   * (Unkey v1's order). `after-access`: once the root key may update the identity (Unkey v2's, whose handler needs
   * identity.*.update_identity before it reads the input; Keygate also takes identity.<id>.update_identity, which
   * needs the identity found).
   */
  inputCheck: 'before-lookup' | 'after-access'
}

/**
 * Replaces what is given of an identity's meta and limits: one write however much changes, and every key of the
 * identity follows, on every verifier, within the bound.
 */
export async function updateIdentity(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateIdentityInput,
): Promise<IdentityRecord> {
  const checkedFirst = input.inputCheck === 'before-lookup' ? checkedChange(input) : undefined
  const found = await allowedIdentity(deps.identities, caller.principal, input.identity, 'update_identity')
  const { meta, ratelimits } = checkedFirst ?? checkedChange(input)
  const usageThresholds = input.usageThresholds && normalisedThresholds(input.usageThresholds)
  const subject = { identity: found.doc.externalId }
  const thresholdIndex = new UsageThresholdIndex(deps.store.entities)
  await thresholdIndex.beforeWrite(subject, usageThresholds)
  let before: IdentityRecord | undefined
  const after = await deps.identities.update({ identityId: found.doc.id }, (current) => {
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
    if (usageThresholds !== undefined) {
      if (usageThresholds.length > 0) next.usageThresholds = usageThresholds
      else delete next.usageThresholds
    }
    return next
  })
  const thresholdsNow = async () => (await deps.identities.byExternalId(subject.identity))?.doc.usageThresholds
  if (usageThresholds?.length) await thresholdIndex.afterSetting(subject, thresholdsNow)
  else if (usageThresholds !== undefined && before?.usageThresholds !== undefined) {
    await thresholdIndex.afterClearing(subject, thresholdsNow)
  }
  caller.log.info({ identityId: after.id, rootKeyId: caller.principal.rootKeyId }, 'identity updated')
  await deps.audit.record(caller, 'identities.updateIdentity', { before: { ...before }, after: { ...after } })
  return after
}

/** The change as stored, once its limits' names are found unique and its meta within bounds. */
function checkedChange(input: UpdateIdentityInput): {
  meta?: Record<string, unknown>
  ratelimits?: NamedRateLimit[]
} {
  const ratelimits = input.ratelimits && namedLimitsOf(input.ratelimits)
  checkMeta(input.meta)
  return { meta: input.meta, ratelimits }
}
