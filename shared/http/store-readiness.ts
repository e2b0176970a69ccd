import type { StoreHealth } from '../store/store-health.js'

/** Readiness check of the store: a ping, answered as a list of reasons not to be ready. */
export function storeReadiness(store: StoreHealth): () => Promise<string[]> {
  return async () => {
    try {
      await store.ping()
      return []
    } catch {
      return [`${store.kind} store unreachable`]
    }
  }
}
