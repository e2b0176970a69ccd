import type { Caller } from './caller.js'
import { fieldError, notFound } from '../shared/errors.js'
import type { KeyContext } from '../shared/key-context.js'
import type { KeyRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { requireHiddenApiPermission } from './root-key-auth.js'
import { ownerIdOf } from './v1-field-rules.js'

/** Which keys of an api apis.listKeys asks for, in either wire format. */
export interface KeyListing {
  apiId: string
  limit: number
  cursor?: string | undefined
  /** Only the keys of this owner; `ownerId` is v1's deprecated alias. */
  externalId?: string | undefined
  ownerId?: string | undefined
  decrypt?: boolean | undefined
  /**
   * Whether `cursor` must be absent exactly when nothing follows (v2: the SDK asks for another page while one comes
   * back). Otherwise (v1's contract) a full page carries one even when it is the last.
   */
  exactEnd?: boolean
}

export interface ListedKeys {
  keys: { record: KeyRecord; context: KeyContext }[]
  /** Keys of the whole api (every owner). */
  total: number
  cursor?: string
}

/** A page of an api's keys, sorted by id, each with what it is granted: read_key and read_api, then the api. */
export async function listApiKeys(deps: ControlPlaneDeps, caller: Caller, listing: KeyListing): Promise<ListedKeys> {
  const { apiId, cursor, limit } = listing
  requireHiddenApiPermission(caller.principal, apiId, 'read_key', 'read_api')
  if (listing.decrypt)
    throw fieldError('PRECONDITION_FAILED', 'decrypt', 'Keygate stores only hashes; keys cannot be shown again')
  const ownerId = ownerIdOf(listing) ?? undefined
  if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  // One more than the page, to know whether another follows.
  const page = await deps.store.keys.listKeys(apiId, { cursor, limit: listing.exactEnd ? limit + 1 : limit, ownerId })
  let { keys, cursor: next } = page
  if (listing.exactEnd && keys.length > limit) {
    keys = keys.slice(0, limit)
    next = keys[limit - 1]!.id
  }
  // (A shorter page with a cursor: the store's scan stopped early, so more may follow; it says where to go on.)
  // One memo for the page: the keys of an api mostly share their roles and permissions.
  const memo = new Map<string, unknown>()
  const contexts = await Promise.all(keys.map((key) => deps.rbac.contextOf(key, memo)))
  return { keys: keys.map((record, i) => ({ record, context: contexts[i]! })), total: page.total, cursor: next }
}
