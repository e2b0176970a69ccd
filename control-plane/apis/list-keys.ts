import { notFound } from '../../shared/errors/errors.js'
import type { KeyContext } from '../../shared/keys/key-context.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireHiddenApiPermission } from '../root-keys/root-key-auth.js'
import { noPlaintext, ownerIdOf } from '../keys/rules/v1-field-rules.js'

/** Which keys of an api to list. */
export interface ListKeysInput {
  apiId: string
  limit: number
  cursor?: string | undefined
  /** Only the keys of this owner; `ownerId` is its deprecated alias (both may be sent only if they agree). */
  externalId?: string | undefined
  ownerId?: string | undefined
  /** Asks for the keys themselves: refused (412), Keygate keeps only hashes. */
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

/**
 * A page of an api's keys, sorted by id, each with what it is granted. In order: read_key and read_api on the api (a
 * refusal v2 answers as the api's 404), `decrypt`, the owner filter, then the api.
 */
export async function listKeys(deps: ControlPlaneDeps, caller: Caller, input: ListKeysInput): Promise<ListedKeys> {
  const { apiId, cursor, limit } = input
  requireHiddenApiPermission(caller.principal, apiId, 'read_key', 'read_api')
  if (input.decrypt) throw noPlaintext()
  const ownerId = ownerIdOf(input) ?? undefined
  if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
  // One more than the page, to know whether another follows.
  const page = await deps.store.keys.listKeys(apiId, { cursor, limit: input.exactEnd ? limit + 1 : limit, ownerId })
  let { keys, cursor: next } = page
  if (input.exactEnd && keys.length > limit) {
    keys = keys.slice(0, limit)
    next = keys[limit - 1]!.id
  }
  // (A shorter page with a cursor: the store's scan stopped early, so more may follow; it says where to go on.)
  // One memo for the page: the keys of an api mostly share their roles and permissions.
  const memo = new Map<string, unknown>()
  const contexts = await Promise.all(keys.map((key) => deps.rbac.contextOf(key, memo)))
  return { keys: keys.map((record, i) => ({ record, context: contexts[i]! })), total: page.total, cursor: next }
}
