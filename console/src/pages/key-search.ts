import { ApiCallError, type KeygateApi } from '../api.js'
import type { Key } from '../types.js'

/** Keys read from the API per search step: ten of its pages, then the admin is offered to search further. */
const PAGES_PER_STEP = 10

export interface SearchStep {
  keys: Key[]
  /** Where the next step starts (the API's cursor); absent once every key was read. */
  cursor?: string
  scanned: number
}

const fieldsOf = (key: Key) => [key.name, key.ownerId, key.identity?.externalId, key.id, key.start]

/**
 * Keys of an api whose name, owner (externalId), id or start contains `text` (ignoring case). The API lists keys in
 * id order and filters only by exact externalId, so the console reads its pages on the API's cursor and keeps the
 * matches, a bounded number of pages per step. A whole key id is looked up directly first.
 */
export async function searchKeys(api: KeygateApi, apiId: string, text: string, cursor?: string): Promise<SearchStep> {
  const needle = text.trim().toLowerCase()
  if (cursor === undefined && /^key_[1-9A-HJ-NP-Za-km-z]+$/.test(text.trim())) {
    try {
      const key = await api.get('keys.getKey', { keyId: text.trim() })
      if (key.apiId === apiId) return { keys: [key], scanned: 1 }
    } catch (err) {
      if (!(err instanceof ApiCallError) || err.code !== 'NOT_FOUND') throw err
    }
  }
  const keys: Key[] = []
  let scanned = 0
  let next = cursor
  for (let page = 0; page < PAGES_PER_STEP; page++) {
    const answer = await api.get('apis.listKeys', { apiId, limit: 100, cursor: next })
    scanned += answer.keys.length
    keys.push(...answer.keys.filter((key) => fieldsOf(key).some((field) => field?.toLowerCase().includes(needle))))
    next = answer.cursor
    if (next === undefined) break
  }
  return { keys, cursor: next, scanned }
}
