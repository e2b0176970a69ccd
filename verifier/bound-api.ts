import type { Logger } from 'pino'
import type { ApiKeyStore } from '../shared/store/api-keys/api-key-store.js'

export interface BoundApi {
  /** Why the verifier is not ready on its api's account ([] when it has none, or the api exists). */
  notReadyReasons(): Promise<string[]>
}

/**
 * Readiness of a verifier bound to one api (--api-id): not ready while that api does not exist, since every key
 * would be refused. Asked again (one read) each time readiness is, until the api is there, so creating it later
 * turns /readyz green; once seen it is not asked again (deleting the api later refuses its keys, and is not a
 * reason to take the pods out of service). The first answer "absent" is logged, naming the api.
 */
export function boundApi(store: Pick<ApiKeyStore, 'apiExists'>, apiId: string | undefined, log: Logger): BoundApi {
  let state: 'exists' | 'absent' | 'unknown' = apiId === undefined ? 'exists' : 'unknown'
  const current = () => state
  let pending: Promise<void> | undefined
  const check = async (id: string) => {
    let exists: boolean
    try {
      exists = await store.apiExists(id)
    } catch {
      // Unreachable: the store's own readiness says so; asked again next time.
      return
    }
    if (exists && state === 'absent') log.info({ apiId: id }, 'the bound api (AUTHORIZE_API_ID) exists now')
    if (!exists && state === 'unknown') {
      log.warn(
        { apiId: id },
        'the bound api (AUTHORIZE_API_ID) does not exist: /readyz answers 503 until it is created (is it the right id?)',
      )
    }
    state = exists ? 'exists' : 'absent'
  }
  return {
    async notReadyReasons() {
      if (state === 'exists' || apiId === undefined) return []
      // Probes and metric scrapes asking at once share one read.
      pending ??= check(apiId).finally(() => (pending = undefined))
      await pending
      // Read again: the check above has moved it.
      const after = current()
      if (after === 'exists') return []
      return [`api ${apiId} (AUTHORIZE_API_ID) ${after === 'absent' ? 'does not exist' : 'not confirmed yet'}`]
    },
  }
}
