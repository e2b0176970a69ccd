import { identityAddress, type IdentityRecord } from '../../../shared/identity.js'
import type { PortalThreshold } from '../../../shared/portal-answers.js'
import { usagePeriodAt, usageSubjectMember } from '../../../shared/usage-threshold.js'
import { currentUsage } from '../../analytics/current-usage.js'
import { reportEngine } from '../../analytics/usage-report.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { requireScope } from '../portal-scopes.js'
import type { PortalCaller } from './portal-caller.js'

/**
 * The customer's usage thresholds (their identity's: identities.updateIdentity sets them), each with its usage in the
 * current UTC day or month as usage alerts count it — over every api, billable by each api's billableOutcomes — so that
 * the portal shows how near each one is. Needs analytics:read (403); none when the identity has none.
 */
export async function getPortalUsageThresholds(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
): Promise<PortalThreshold[]> {
  requireScope(caller.session.scopes, 'analytics:read')
  const { externalId } = caller.session
  const identity = await deps.store.entities.getEntity<IdentityRecord>(identityAddress(externalId))
  const thresholds = identity?.doc.usageThresholds ?? []
  if (thresholds.length === 0) return []
  const now = deps.clock.now()
  const subject = { identity: externalId }
  const usage = await currentUsage(reportEngine(deps.analytics), deps.apiSettings, [subject], now)
  const counted = usage.get(usageSubjectMember(subject))!
  return thresholds.map((threshold) => {
    const { start, end } = usagePeriodAt(threshold.period, now)
    return { ...threshold, usage: counted[threshold.period][threshold.measure], start, end }
  })
}
