import type { KeyContext } from '../../../shared/keys/key-context.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { PortalCaller } from './portal-caller.js'
import { requireScope } from '../portal-scopes.js'
import { lastUsedAt } from './last-used.js'
import { sessionKeys } from './session-keys.js'

export interface PortalKeyPage {
  keys: { record: KeyRecord; context: KeyContext; lastUsedAt: number | undefined }[]
  /** The last key's id when another page follows. */
  cursor: string | undefined
}

/**
 * The session's customer's keys in its apis, a page at a time in id (creation) order; `cursor` is the last key of the
 * previous page. Needs keys:read (403 otherwise, before anything is read).
 */
export async function listPortalKeys(
  deps: ControlPlaneDeps,
  caller: PortalCaller,
  input: { limit: number; cursor?: string | undefined },
): Promise<PortalKeyPage> {
  requireScope(caller.session.scopes, 'keys:read')
  const all = await sessionKeys(deps, caller)
  const after = input.cursor === undefined ? all : all.filter((key) => key.id > input.cursor!)
  const page = after.slice(0, input.limit)
  const memo = new Map<string, unknown>()
  const used = await lastUsedAt(deps.analytics, page)
  const keys = await Promise.all(
    page.map(async (record) => ({
      record,
      context: await deps.rbac.contextOf(record, memo),
      lastUsedAt: used.get(record.id),
    })),
  )
  return { keys, cursor: after.length > input.limit ? page.at(-1)?.id : undefined }
}
