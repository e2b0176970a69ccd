import type { KeyRecord } from '../shared/keys/records.js'
import type { ApiKeyStore } from '../shared/store/api-keys/api-key-store.js'
import type { KeyCache } from './key-cache.js'
import { RecordLookup } from './record-lookup.js'

/**
 * The key cache's miss path: one read per hash at a time, never older than a change already seen, and only the
 * record of the hash asked for (defence in depth: a confused connection's answer for another key is refused).
 */
export class KeyLookup extends RecordLookup<KeyRecord> {
  constructor(store: Pick<ApiKeyStore, 'getKeyByHash'>, cache: KeyCache, maxPending = 10_000) {
    super((hash) => store.getKeyByHash(hash), cache, maxPending, 'key', isRecordOfHash)
  }
}

const isRecordOfHash = (hash: string, record: KeyRecord) => record.hash === hash
