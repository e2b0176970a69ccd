import { notFound, type ApiError } from '../../../shared/errors.js'
import { generateKey } from '../../../shared/key-material.js'
import { normalisedAllowlist, type AllowlistInput } from '../../../shared/ip-allowlist.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { bindIdentity, checkIdentityBinding } from '../../identity-binding.js'
import { grantsOfNames, newKeyRecord, withGrants, type MissingGrantNames } from '../../new-key-record.js'
import { requireHiddenApiPermission } from '../../root-key-auth.js'
import type { NewKeyFields } from '../../schemas/key-schemas.js'
import { notRecoverable, ownerIdOf } from '../../v1-field-rules.js'

/** A new key: its fields, how the key itself is made, and the rule for names of permissions and roles not made yet. */
export interface CreateKeyInput extends NewKeyFields {
  prefix?: string
  byteLength?: number
  recoverable?: boolean
  /** The addresses the key may be verified from, as the wire named the field. */
  ipAllowlist?: AllowlistInput | undefined
  missingGrantNames: MissingGrantNames
  /** What the wire's own rules found wrong with the input (problemOf): reported once the root key may create keys. */
  wireProblem?: ApiError | undefined
}

/**
 * Creates a key. In order: the root key's right on the api (a refusal v2 answers as the api's 404), the wire's
 * problem with the input if it found one, the fields
 * (checked before anything is created for them), the api, the right to bind the externalId's identity, the
 * permissions and roles (created as `missingGrantNames` says), the identity, then the key. The key itself is
 * answered this once: only its hash is kept.
 */
export async function createKey(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: CreateKeyInput,
): Promise<{ keyId: string; key: string }> {
  const { principal } = caller
  requireHiddenApiPermission(principal, input.apiId, 'create_key')
  if (input.wireProblem) throw input.wireProblem
  if (input.recoverable) throw notRecoverable()
  const { key, ...material } = generateKey(input.prefix, input.byteLength)
  const checked = {
    ...newKeyRecord(input, material, deps.clock.now()),
    ipAllowlist: input.ipAllowlist && normalisedAllowlist(input.ipAllowlist),
  }
  if (!(await deps.store.keys.getApi(input.apiId))) throw notFound('api', `api ${input.apiId} not found`)
  const ownerId = ownerIdOf(input) ?? undefined
  if (ownerId !== undefined) await checkIdentityBinding(deps, principal, ownerId)
  const grants = await grantsOfNames(input, input.missingGrantNames, deps.rbac, principal)
  if (ownerId !== undefined) await bindIdentity(deps, caller, ownerId)

  const write = await deps.writes.createKey(withGrants(checked, grants))
  caller.log.info({ keyId: write.record.id, apiId: input.apiId, rootKeyId: principal.rootKeyId }, 'key created')
  await deps.audit.record(caller, 'keys.createKey', { apiId: input.apiId, keyId: write.record.id, after: write.record })
  return { keyId: write.record.id, key }
}
