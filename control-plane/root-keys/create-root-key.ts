import { actorOf } from '../audit/audit-log.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireRootKeyManagement } from './root-key-auth.js'
import type { NewRootKey } from './root-keys.js'

/** A new root key: a name to recognise it by, and what it may do. */
export interface CreateRootKeyInput {
  name?: string | undefined
  permissions: string[]
}

/**
 * Creates a root key: the caller needs rootkey.*.manage and every permission it gives (a root key makes another with
 * at most its own permissions). The key is in the answer once; only its hash is stored.
 */
export async function createRootKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateRootKeyInput,
): Promise<NewRootKey> {
  const { principal } = caller
  requireRootKeyManagement(principal, input.permissions)
  const created = await deps.rootKeys.create(actorOf(caller), input)
  caller.log.info({ newRootKeyId: created.record.id, rootKeyId: principal.rootKeyId }, 'root key created')
  return created
}
