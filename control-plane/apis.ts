import type { FastifyRequest } from 'fastify'
import { notFound } from '../shared/errors.js'
import { newId } from '../shared/ids.js'
import type { ApiRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { KeyWrites } from './key-writes.js'
import { principalOf, requirePermission } from './root-key-auth.js'

/** Apis as both wire formats (v1, v2) create, read and delete them: the root key's permission, then the store. */
export async function createApi(deps: ControlPlaneDeps, request: FastifyRequest, name: string): Promise<ApiRecord> {
  const principal = principalOf(request)
  requirePermission(principal, '*', 'create_api')
  const api = { id: newId('api', deps.clock.now()), name, createdAt: deps.clock.now() }
  await deps.store.createApi(api)
  await deps.audit.record(request, 'apis.createApi', { apiId: api.id, after: { id: api.id, name: api.name } })
  request.log.info({ apiId: api.id, rootKeyId: principal.rootKeyId }, 'api created')
  return api
}

/** The api `apiId`, if the root key may read it; the contract's 404 when there is none. */
export async function readApi(deps: ControlPlaneDeps, request: FastifyRequest, apiId: string): Promise<ApiRecord> {
  requirePermission(principalOf(request), apiId, 'read_api')
  const api = await deps.store.getApi(apiId)
  if (!api) throw notFound(`api ${apiId} not found`)
  return api
}

/** Deletes the api `apiId` and every key of it (403, then 404): they all stop verifying. */
export async function deleteApi(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  request: FastifyRequest,
  apiId: string,
): Promise<void> {
  requirePermission(principalOf(request), apiId, 'delete_api')
  await writes.deleteApi(apiId)
  await deps.audit.record(request, 'apis.deleteApi', { apiId })
}
