import { ApiError } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { ApiKeyStore } from '../../shared/store/api-keys/api-key-store.js'

/** Keys an analytics read may sum over: beyond this the answer would cost too much to compute on each call. */
export const MAX_KEYS_PER_REPORT = 1_000
const PAGE = 100

/**
 * The keys of an api, or of one owner (externalId) in it, read page by page through the store's indexes. More
 * than MAX_KEYS_PER_REPORT is a 412 rather than a sum over some of them: a partial count would look like a true one.
 */
export async function keysInScope(
  store: Pick<ApiKeyStore, 'listKeys'>,
  apiId: string,
  ownerId: string | undefined,
): Promise<KeyRecord[]> {
  const keys: KeyRecord[] = []
  let cursor: string | undefined
  do {
    const page = await store.listKeys(apiId, { cursor, limit: PAGE, ownerId })
    keys.push(...page.keys)
    if (keys.length > MAX_KEYS_PER_REPORT) {
      throw new ApiError(
        'PRECONDITION_FAILED',
        `${ownerId === undefined ? `api ${apiId}` : `externalId ${ownerId}`} has more than ${MAX_KEYS_PER_REPORT} keys: name them with keyId`,
      )
    }
    cursor = page.cursor
  } while (cursor !== undefined)
  return keys
}
