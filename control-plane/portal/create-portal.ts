import { newId } from '../../shared/ids.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { DEFAULT_MAX_KEYS_PER_IDENTITY, type PortalKeyDefaults, type PortalRecord } from './portal-record.js'
import { requireAction } from '../root-keys/root-key-auth.js'
import { checkKeyDefaults } from './session/portal-key-fields.js'
import { checkPortalApis } from './portal-apis.js'

export interface CreatePortalInput {
  slug: string
  name: string
  apiIds: string[]
  enabled?: boolean | undefined
  logoUrl?: string | undefined
  accentColor?: string | undefined
  keyDefaults?: PortalKeyDefaults | undefined
  maxKeysPerIdentity?: number | undefined
}

/**
 * Creates a portal. In order: the root key's `portal.*.create_portal` (403), its read_api on each api and the apis
 * themselves (404), the key defaults (400), then the slug (409 if taken). A portal grants nothing by itself: each
 * session is minted with rights the minting root key holds.
 */
export async function createPortal(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreatePortalInput,
): Promise<PortalRecord> {
  requireAction(caller.principal, 'portal', '*', 'create_portal')
  await checkPortalApis(deps, caller, input.apiIds)
  const now = deps.clock.now()
  checkKeyDefaults(input.keyDefaults, now)
  const portal: PortalRecord = {
    id: newId('portal', now),
    slug: input.slug,
    name: input.name,
    apiIds: input.apiIds,
    enabled: input.enabled ?? true,
    ...(input.logoUrl !== undefined ? { logoUrl: input.logoUrl } : {}),
    ...(input.accentColor !== undefined ? { accentColor: input.accentColor.toLowerCase() } : {}),
    ...(input.keyDefaults !== undefined ? { keyDefaults: input.keyDefaults } : {}),
    maxKeysPerIdentity: input.maxKeysPerIdentity ?? DEFAULT_MAX_KEYS_PER_IDENTITY,
    createdAt: now,
  }
  await deps.portals.create(portal)
  caller.log.info({ portalId: portal.id, rootKeyId: caller.principal.rootKeyId }, 'portal created')
  await deps.audit.record(caller, 'portal.createPortal', { after: { ...portal } })
  return portal
}
