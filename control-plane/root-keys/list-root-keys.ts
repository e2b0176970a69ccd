import type { RootKeyRecord } from '../../shared/keys/records.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireRootKeyManagement } from './root-key-auth.js'

/** A page of the stored root keys: the id of the last one seen (or none: from the first), and its length. */
export interface ListRootKeysInput {
  cursor?: string | undefined
  limit: number
}

export interface RootKeyPage {
  rootKeys: RootKeyRecord[]
  /** The id to start the next page after; absent on the last page. */
  cursor: string | undefined
}

/** The stored root keys, oldest first, for a root key with rootkey.*.manage. */
export async function listRootKeys(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ListRootKeysInput,
): Promise<RootKeyPage> {
  requireRootKeyManagement(caller.principal)
  const { cursor, limit } = input
  // Root keys are few: the store answers them all, the page is cut here.
  const after = (await deps.rootKeys.list()).filter((record) => cursor === undefined || record.id > cursor)
  const page = after.slice(0, limit)
  return { rootKeys: page, cursor: after.length > limit ? page[page.length - 1]!.id : undefined }
}
