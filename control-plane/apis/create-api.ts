import type { LeakPolicy } from '../../shared/leak.js'
import { newId } from '../../shared/ids.js'
import { normalisedAllowlist, type AllowlistInput } from '../../shared/addresses/ip-allowlist.js'
import type { ApiRecord } from '../../shared/keys/records.js'
import { APIS_INDEX } from './apis-index.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

export interface CreateApiInput {
  name: string
  ipAllowlist?: AllowlistInput | undefined
  leakPolicy?: LeakPolicy | undefined
}

/**
 * Creates an api named `name` (not unique: an api is known by its id): `api.*.create_api`, its allow-list checked,
 * then the store. Its settings are written before its record, so that no reader ever finds the api without them.
 */
export async function createApi(deps: ControlPlaneDeps, caller: Caller, input: CreateApiInput): Promise<ApiRecord> {
  const { principal } = caller
  requirePermission(principal, '*', 'create_api')
  const ipAllowlist = input.ipAllowlist && normalisedAllowlist(input.ipAllowlist)
  const api = { id: newId('api', deps.clock.now()), name: input.name, createdAt: deps.clock.now() }
  await deps.store.entities.addToIndex(APIS_INDEX, api.id)
  const settings =
    ipAllowlist !== undefined || input.leakPolicy !== undefined
      ? (await deps.apiSettings.change(api.id, { ipAllowlist, leakPolicy: input.leakPolicy })).after
      : {}
  await deps.store.keys.createApi(api)
  await deps.audit.record(caller, 'apis.createApi', {
    apiId: api.id,
    after: { id: api.id, name: api.name, ...settings },
  })
  caller.log.info({ apiId: api.id, rootKeyId: principal.rootKeyId }, 'api created')
  return api
}
