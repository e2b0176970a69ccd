import type { KeyStore } from '../store/key-store.js'

/** Readiness check of the store: a ping, answered as a list of reasons not to be ready. */
export function storeReadiness(store: KeyStore): () => Promise<string[]> {
  return async () => {
    try {
      await store.ping()
      return []
    } catch {
      return [`${store.kind} store unreachable`]
    }
  }
}
