import { isDeepStrictEqual } from 'node:util'
import { apiSettingsAddress, type ApiSettings } from '../../shared/api-settings.js'
import type { LeakPolicy } from '../../shared/leak.js'
import type { VerdictCode } from '../../shared/verification/verification.js'
import { WriteConflictError } from '../../shared/errors/errors.js'
import type { EntityStore } from '../../shared/store/entities/entity-store.js'
import type { WriteListener } from '../write-listener.js'

// A compare-and-set write is retried this many times against concurrent writers before a 409.
const WRITE_ATTEMPTS = 5

/** Changes to an api's settings: a field left out is unchanged, null clears it (an empty list too). */
export interface ApiSettingsPatch {
  /** Normalised (shared/addresses/ip-allowlist.ts). */
  ipAllowlist?: string[] | null
  leakPolicy?: LeakPolicy | null
  /** An empty list, as null, goes back to the default. */
  billableOutcomes?: VerdictCode[] | null
}

/**
 * Apis' settings (shared/api-settings.ts), written through the entity mechanism: each write bumps its shard's revision
 * and is logged and published, so every verifier drops what it cached of them within the revocation bound. An api that
 * sets nothing has no entity: a write that leaves nothing set deletes it.
 */
export class ApiSettingsRecords {
  constructor(
    private readonly store: EntityStore,
    private readonly onWrite: WriteListener,
  ) {}

  /** The api's settings ({} when it sets none). */
  async of(apiId: string): Promise<ApiSettings> {
    return (await this.store.getEntity<ApiSettings>(apiSettingsAddress(apiId)))?.doc ?? {}
  }

  /**
   * Applies `patch` to the freshest settings and writes them (nothing, when they do not change); answers them as they
   * were and as written.
   */
  async change(apiId: string, patch: ApiSettingsPatch): Promise<{ before: ApiSettings; after: ApiSettings }> {
    const address = apiSettingsAddress(apiId)
    for (let attempt = 1; ; attempt++) {
      const current = await this.store.getEntity<ApiSettings>(address)
      const before = current?.doc ?? {}
      const next = patched(before, patch)
      if (isDeepStrictEqual(before, next)) return { before, after: next }
      const empty = Object.keys(next).length === 0
      const write =
        current === null
          ? await this.store.writeEntity(address, apiId, 'created', next)
          : empty
            ? await this.store.writeEntity(address, apiId, 'deleted', null, current.rev)
            : await this.store.writeEntity(address, apiId, 'updated', next, current.rev)
      if (typeof write !== 'string') {
        this.onWrite(write)
        return { before, after: next }
      }
      if (attempt === WRITE_ATTEMPTS) throw new WriteConflictError()
    }
  }

  /** Deletes the api's settings, if it has any (apis.deleteApi, once its keys are gone). */
  async delete(apiId: string): Promise<void> {
    await this.change(apiId, { ipAllowlist: null, leakPolicy: null, billableOutcomes: null })
  }
}

function patched(settings: ApiSettings, patch: ApiSettingsPatch): ApiSettings {
  const next: ApiSettings = { ...settings }
  if (patch.ipAllowlist === null || patch.ipAllowlist?.length === 0) delete next.ipAllowlist
  else if (patch.ipAllowlist !== undefined) next.ipAllowlist = patch.ipAllowlist
  if (patch.leakPolicy === null) delete next.leakPolicy
  else if (patch.leakPolicy !== undefined) next.leakPolicy = patch.leakPolicy
  if (patch.billableOutcomes === null || patch.billableOutcomes?.length === 0) delete next.billableOutcomes
  else if (patch.billableOutcomes !== undefined) next.billableOutcomes = [...new Set(patch.billableOutcomes)].sort()
  return next
}
