import { notFound } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { generateKey } from '../../shared/keys/key-material.js'
import type { Caller } from '../caller.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { requireHiddenApiPermission } from '../root-keys/root-key-auth.js'
import { checkedNewKey, type NewKey } from './key-fields.js'
import type { MissingGrantNames } from '../permissions/rbac.js'
import { madeReferences } from './key-references.js'

/** A key to create: its fields, how the key itself is made, and the rule for names of records not made yet. */
export interface CreateKeyInput extends NewKey {
  /** Starts the key, followed by `_`. */
  prefix?: string | undefined
  /** Random bytes in the key. */
  byteLength?: number | undefined
  missingGrantNames: MissingGrantNames
}

/**
 * The right keys.createKey needs, checked before its input is (a root key that may not create keys learns that
 * first): `create_key` on the api, whose refusal v2 answers as the api's 404.
 */
export function authorizeCreateKey(caller: Caller, apiId: string): void {
  requireHiddenApiPermission(caller.principal, apiId, 'create_key')
}

/**
 * Creates a key, once authorizeCreateKey has passed. In order: the fields (checked before anything is created for
 * them), the api, what the key refers to (its identity's right, its permissions and roles, its identity: see
 * madeReferences), then the key. The key itself is answered this once: only its hash is kept.
 */
export async function createKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateKeyInput,
): Promise<{ keyId: string; key: string }> {
  const now = deps.clock.now()
  const fields = checkedNewKey(input, now)
  if (!(await deps.store.keys.getApi(input.apiId))) throw notFound('api', `api ${input.apiId} not found`)
  const grants = await madeReferences(
    deps,
    caller,
    { ownerId: fields.ownerId, permissions: input.permissions, roles: input.roles },
    input.missingGrantNames,
  )
  const { key, ...material } = generateKey(input.prefix, input.byteLength)

  const write = await deps.writes.createKey({ id: newId('key', now), ...material, ...fields, ...grants })
  const rootKeyId = caller.principal.rootKeyId
  caller.log.info({ keyId: write.record.id, apiId: input.apiId, rootKeyId }, 'key created')
  await deps.audit.record(caller, 'keys.createKey', { apiId: input.apiId, keyId: write.record.id, after: write.record })
  return { keyId: write.record.id, key }
}
