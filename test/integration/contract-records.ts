import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { ApiRecord, NewKeyRecord } from '../../shared/keys/records.js'
import type { Store } from '../../shared/store/store.js'

/** A new api, stored: each contract test makes its own. */
export async function newApi(store: Store): Promise<ApiRecord> {
  const api = { id: newId('api'), name: 'contract', createdAt: Date.now() }
  await store.keys.createApi(api)
  return api
}

/** A new key of the api (not stored yet). */
export function newKey(apiId: string, extra: Partial<NewKeyRecord> = {}): NewKeyRecord {
  const { hash, start } = generateKey('t')
  return { id: newId('key'), hash, start, apiId, enabled: true, createdAt: Date.now(), ...extra }
}
