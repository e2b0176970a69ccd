import type { Caller } from './caller.js'
import { notFound } from '../shared/errors.js'
import type { KeyContext } from '../shared/key-context.js'
import { generateKey } from '../shared/key-material.js'
import type { KeyRecord } from '../shared/records.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { bindIdentity, checkIdentityBinding } from './identity-binding.js'
import type { KeyWrites } from './key-writes.js'
import { newKeyGrants, newKeyRecord, type KeyGrants } from './new-key-record.js'
import { requireKeyPermission, requirePermission, type Principal } from './root-key-auth.js'
import type { NewKeyFields } from './schemas/key-schemas.js'
import { notRecoverable, ownerIdOf } from './v1-field-rules.js'

/** What keys.createKey is given in either wire format: the new key's fields, and how the key itself is made. */
export interface KeyCreation extends NewKeyFields {
  prefix?: string
  byteLength?: number
  recoverable?: boolean
}

/** How a new key's `permissions` and `roles` become records: each wire format has its rule (Unkey's differ). */
export type GrantsOf = (principal: Principal) => Promise<KeyGrants>

/**
 * Keys as both wire formats (v1, v2) create, read and delete them. createKey: the root key's permission, the
 * fields (checked before anything is created for them), the api, the right to bind the externalId's identity, the
 * permissions and roles, the identity, then the key. The key itself is returned this once.
 */
export async function createKey(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  caller: Caller,
  fields: KeyCreation,
  grantsOf: GrantsOf = (principal) => newKeyGrants(fields, deps.rbac, principal),
): Promise<{ keyId: string; key: string }> {
  const principal = caller.principal
  requirePermission(principal, fields.apiId, 'create_key')
  if (fields.recoverable) throw notRecoverable()
  const { key, ...material } = generateKey(fields.prefix, fields.byteLength)
  // The fields are checked before anything (a permission or role) is created for them.
  newKeyRecord(fields, material, deps.clock.now())
  if (!(await deps.store.keys.getApi(fields.apiId))) throw notFound('api', `api ${fields.apiId} not found`)
  const ownerId = ownerIdOf(fields) ?? undefined
  if (ownerId !== undefined) await checkIdentityBinding(deps, principal, ownerId)
  const grants = await grantsOf(principal)
  const record = newKeyRecord(fields, material, deps.clock.now(), grants)
  if (ownerId !== undefined) await bindIdentity(deps, caller, ownerId)

  const write = await writes.createKey(record)
  caller.log.info({ keyId: write.record.id, apiId: fields.apiId, rootKeyId: principal.rootKeyId }, 'key created')
  await deps.audit.record(caller, 'keys.createKey', {
    apiId: fields.apiId,
    keyId: write.record.id,
    after: write.record,
  })
  return { keyId: write.record.id, key }
}

/** The key `keyId` and what it is granted, if the root key may read it: 404, then 403. */
export async function readKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  keyId: string,
): Promise<{ record: KeyRecord; context: KeyContext }> {
  const principal = caller.principal
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireKeyPermission(principal, record, 'read_key')
  return { record, context: await deps.rbac.contextOf(record) }
}

/** Deletes the key `keyId` (404, then 403): it stops verifying at once. */
export async function deleteKey(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  caller: Caller,
  keyId: string,
): Promise<void> {
  const principal = caller.principal
  const record = await deps.store.keys.getKeyById(keyId)
  if (!record) throw notFound('key', `key ${keyId} not found`)
  requireKeyPermission(principal, record, 'delete_key')
  if (!(await writes.deleteKey(keyId))) throw notFound('key', `key ${keyId} not found`)
  caller.log.info({ keyId, rootKeyId: principal.rootKeyId }, 'key deleted')
  await deps.audit.record(caller, 'keys.deleteKey', { apiId: record.apiId, keyId, before: record })
}
