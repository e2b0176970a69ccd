import { isDeepStrictEqual } from 'node:util'
import type { ApiSettings } from '../../shared/api-settings.js'
import type { LeakPolicy } from '../../shared/leak.js'
import type { VerdictCode } from '../../shared/verification/verification.js'
import { notFound } from '../../shared/errors/errors.js'
import { normalisedAllowlist, type AllowlistInput } from '../../shared/addresses/ip-allowlist.js'
import type { ApiRecord } from '../../shared/keys/records.js'
import type { ApiSettingsPatch } from './api-settings.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requirePermission } from '../root-keys/root-key-auth.js'

/** An api's changes: a field left out is unchanged; null (or an empty list) clears it. */
export interface UpdateApiInput {
  apiId: string
  ipAllowlist?: AllowlistInput | null | undefined
  leakPolicy?: LeakPolicy | null | undefined
  billableOutcomes?: VerdictCode[] | null | undefined
}

/**
 * Changes an api's settings (Keygate's: Unkey has no such call). In order: `update_api` on the api (403), the
 * allow-list (400), the api (404). Every verifier applies the change within the revocation bound. Nothing changed:
 * nothing is written or audited (v1 reads the settings so). A write that meets a deleteApi of the same api is undone,
 * and answered as the api's 404.
 */
export async function updateApi(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: UpdateApiInput,
): Promise<{ api: ApiRecord; settings: ApiSettings }> {
  const { apiId } = input
  requirePermission(caller.principal, apiId, 'update_api')
  const patch: ApiSettingsPatch = {
    ipAllowlist: input.ipAllowlist && (normalisedAllowlist(input.ipAllowlist) ?? null),
    leakPolicy: input.leakPolicy,
    billableOutcomes: input.billableOutcomes,
  }
  const api = await deps.store.keys.getApi(apiId)
  if (!api) throw notFound('api', `api ${apiId} not found`)
  const { before, after } = await deps.apiSettings.change(apiId, patch)
  // deleteApi marks the api before it deletes its settings: a write that landed after that would outlive the api.
  if ((await deps.store.keys.apiExistsOrDeleting(apiId)) !== 'exists') {
    await deps.apiSettings.delete(apiId)
    throw notFound('api', `api ${apiId} not found`)
  }
  if (!isDeepStrictEqual(before, after)) {
    await deps.audit.record(caller, 'apis.updateApi', { apiId, before: { ...before }, after: { ...after } })
    caller.log.info({ apiId, rootKeyId: caller.principal.rootKeyId }, 'api updated')
  }
  return { api, settings: after }
}
