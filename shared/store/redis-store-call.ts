import { toStoreError } from './redis-connection.js'

/** One operation of a store part on Redis: its failures as the store's (toStoreError). */
export async function storeCall<T>(operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (err) {
    throw toStoreError(err)
  }
}
