import type { Caller } from './caller.js'
import { notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { ApiRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { KeyWrites } from './key-writes.js'
import { pageThroughIndex, type PageOptions, type RecordPage } from './index-page.js'
import { requirePermission } from './root-key-auth.js'

/**
 * The index of every api by id (creation order), for apis.listApis. Like the keys' indexes it is a pointer written
 * before the record and removed after it, so a crash leaves an entry the listing skips, never an unlisted api.
 */
export const APIS_INDEX = 'apis'

/** Apis as both wire formats (v1, v2) create, read and delete them: the root key's permission, then the store. */
export async function createApi(deps: ControlPlaneDeps, caller: Caller, name: string): Promise<ApiRecord> {
  const principal = caller.principal
  requirePermission(principal, '*', 'create_api')
  const api = { id: newId('api', deps.clock.now()), name, createdAt: deps.clock.now() }
  await deps.store.entities.addToIndex(APIS_INDEX, api.id)
  await deps.store.keys.createApi(api)
  await deps.audit.record(caller, 'apis.createApi', { apiId: api.id, after: { id: api.id, name: api.name } })
  caller.log.info({ apiId: api.id, rootKeyId: principal.rootKeyId }, 'api created')
  return api
}

/** The api `apiId`, if the root key may read it; the contract's 404 when there is none. */
export async function readApi(deps: ControlPlaneDeps, caller: Caller, apiId: string): Promise<ApiRecord> {
  requirePermission(caller.principal, apiId, 'read_api')
  const api = await deps.store.keys.getApi(apiId)
  if (!api) throw notFound('api', `api ${apiId} not found`)
  return api
}

/** Deletes the api `apiId` and every key of it (403, then 404): they all stop verifying. */
export async function deleteApi(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  caller: Caller,
  apiId: string,
): Promise<void> {
  requirePermission(caller.principal, apiId, 'delete_api')
  await writes.deleteApi(apiId)
  await deps.store.entities.removeFromIndex(APIS_INDEX, apiId)
  await deps.audit.record(caller, 'apis.deleteApi', { apiId })
}

/**
 * A page of every api, oldest first, for a root key that may read them all (`api.*.read_api`, as listing identities
 * needs `identity.*.read_identity`): a list filtered by permission would tell a narrower key nothing it needs, and the
 * console opens an api by its id. Apis stored without an index entry (the legacy layout) are not listed.
 */
export async function listApis(
  deps: ControlPlaneDeps,
  caller: Caller,
  page: PageOptions,
): Promise<RecordPage<ApiRecord>> {
  requirePermission(caller.principal, '*', 'read_api')
  return pageThroughIndex(deps.store.entities, APIS_INDEX, page, (apiId) => deps.store.keys.getApi(apiId))
}
