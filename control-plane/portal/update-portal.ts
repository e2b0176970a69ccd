import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { PortalKeyDefaults, PortalRecord } from './portal-record.js'
import { requirePortal } from './session/portal-access.js'
import { checkKeyDefaults } from './session/portal-key-fields.js'
import { checkPortalApis } from './portal-apis.js'

/** What updatePortal changes: a field left out is unchanged, null clears an optional one. */
export interface UpdatePortalInput {
  portal: string
  name?: string | undefined
  apiIds?: string[] | undefined
  enabled?: boolean | undefined
  logoUrl?: string | null | undefined
  accentColor?: string | null | undefined
  keyDefaults?: PortalKeyDefaults | null | undefined
  maxKeysPerIdentity?: number | undefined
}

/**
 * Changes a portal. Its sessions see the change on their next call: a disabled portal refuses them (403), an api
 * taken out of it is no longer reached by any of them.
 */
export async function updatePortal(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdatePortalInput,
): Promise<PortalRecord> {
  const found = await requirePortal(deps, caller, input.portal, 'update_portal')
  if (input.apiIds) await checkPortalApis(deps, caller, input.apiIds)
  const now = deps.clock.now()
  if (input.keyDefaults) checkKeyDefaults(input.keyDefaults, now)
  let before: PortalRecord = found
  const after = await deps.portals.update(found.id, (current) => {
    before = current
    const next: PortalRecord = { ...current, updatedAt: now }
    if (input.name !== undefined) next.name = input.name
    if (input.apiIds !== undefined) next.apiIds = input.apiIds
    if (input.enabled !== undefined) next.enabled = input.enabled
    if (input.maxKeysPerIdentity !== undefined) next.maxKeysPerIdentity = input.maxKeysPerIdentity
    if (input.logoUrl === null) delete next.logoUrl
    else if (input.logoUrl !== undefined) next.logoUrl = input.logoUrl
    if (input.accentColor === null) delete next.accentColor
    else if (input.accentColor !== undefined) next.accentColor = input.accentColor.toLowerCase()
    if (input.keyDefaults === null) delete next.keyDefaults
    else if (input.keyDefaults !== undefined) next.keyDefaults = input.keyDefaults
    return next
  })
  caller.log.info({ portalId: after.id, rootKeyId: caller.principal.rootKeyId }, 'portal updated')
  await deps.audit.record(caller, 'portal.updatePortal', { before: { ...before }, after: { ...after } })
  return after
}
