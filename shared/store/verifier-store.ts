import type { ApiKeyStore } from './api-keys/api-key-store.js'
import type { ChangeLogStore } from './change-log/change-log-store.js'
import type { CounterStore } from './counters/counter-store.js'
import type { EntityReader } from './entities/entity-store.js'
import type { StoreHealth } from './store-health.js'
import type { AnalyticsBufferStore } from './analytics-buffer/analytics-buffer-store.js'

/**
 * What the verifier asks of the store (store.ts), part by part: records by hash, whether its bound api exists and
 * credits to spend; entities by address and names' pointers; the shard revisions and change logs it syncs from; the
 * rate-limit counters and the analytics buffer it appends to. Nothing else: a verifier cannot create, list or
 * delete anything.
 */
export interface VerifierStore extends StoreHealth {
  readonly keys: Pick<ApiKeyStore, 'getKeyByHash' | 'scanKeyHashes' | 'apiExists' | 'spendCredits'>
  readonly entities: EntityReader
  readonly changes: ChangeLogStore
  readonly counters: CounterStore
  /** Where its analytics batches go: it appends, and says how far it has handed its rows over. */
  readonly analyticsBuffer: Pick<AnalyticsBufferStore, 'append' | 'reportThrough' | 'forgetProcesses'>
}
