import type { KeyRecord } from '../shared/records.js'
import type { ApiKeyStore } from '../shared/store/api-key-store.js'
import type { KeyCache } from './key-cache.js'
import { RecordLookup } from './record-lookup.js'

/** The key cache's miss path: one read per hash at a time, never older than a change already seen. */
export class KeyLookup extends RecordLookup<KeyRecord> {
  constructor(store: Pick<ApiKeyStore, 'getKeyByHash'>, cache: KeyCache, maxPending = 10_000) {
    super((hash) => store.getKeyByHash(hash), cache, maxPending, 'key')
  }
}
