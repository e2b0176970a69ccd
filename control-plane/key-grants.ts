import type { Caller } from './caller.js'
import { ApiError, invalid } from '../shared/errors.js'
import type { KeyRecord } from '../shared/records.js'
import type { ResourceAction } from '../shared/root-key-actions.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { KeyWrites } from './key-writes.js'
import { may, type Principal } from './root-key-auth.js'
import { LIMITS } from './schemas/limits.js'

/** A key's direct grants: the permissions and the roles it holds (by id). */
export type Field = 'permissions' | 'roles'
export type GrantOperation = 'add' | 'set' | 'remove'

const ID_FIELD = { permissions: 'permissionIds', roles: 'roleIds' } as const

/** The ids of the field on a key record. */
export function grantIdsOf(record: KeyRecord, field: Field): string[] {
  return record[ID_FIELD[field]] ?? []
}

export interface GrantChange {
  field: Field
  operation: GrantOperation
  keyId: string
  /**
   * The ids the request names, resolved (created when the wire format creates them); runs after the key is read,
   * given the key as read and the count the change would leave it holding of `ids` (to refuse before creating).
   */
  resolve: (current: KeyRecord, heldAfter: (ids: readonly string[]) => number) => Promise<string[]>
  /**
   * Throws the contract's 403 unless the root key may make the change to `record`: called on the key as read, before
   * anything is resolved or created (`ids` undefined), then with the ids, and again on the record the write applies to.
   */
  allow: (record: KeyRecord, ids: readonly string[] | undefined) => void
}

/**
 * Adds, replaces or removes a key's permissions or roles: the one write keys.add|set|remove{Permissions,Roles} make
 * in both wire formats, each with its own resolution of names and its own permission rule. 404 for the key comes
 * first, then 403, before anything is resolved or created; the write is a compare-and-set on the freshest record,
 * audited as `keys.<operation><Field>`. Answers the ids the request named and the key as written.
 */
export async function changeKeyGrants(
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  caller: Caller,
  change: GrantChange,
): Promise<{ ids: string[]; record: KeyRecord }> {
  const { field, operation, keyId, allow } = change
  const idField = ID_FIELD[field]
  const current = await writes.readKey(keyId)
  allow(current, undefined)
  const nextOf = (record: KeyRecord, ids: readonly string[]): string[] => {
    const existing = record[idField] ?? []
    if (operation === 'set') return [...ids]
    if (operation === 'add') return [...existing, ...ids]
    return existing.filter((id) => !ids.includes(id))
  }
  const ids = await change.resolve(current, (planned) => new Set(nextOf(current, planned)).size)
  allow(current, ids)
  const next = (record: KeyRecord): string[] => nextOf(record, ids)
  let before: KeyRecord | undefined
  const write = await writes.updateKey(
    keyId,
    (record) => ({ [idField]: next(record) }),
    (record) => {
      before = record
      allow(record, ids)
      if (new Set(next(record)).size > LIMITS.namesPerKey) {
        throw invalid(field, `a key holds at most ${LIMITS.namesPerKey}`)
      }
    },
  )
  const noun = field === 'permissions' ? 'Permissions' : 'Roles'
  caller.log.info(
    { keyId, [field]: write.record[idField]?.length ?? 0, rootKeyId: caller.principal.rootKeyId },
    `key ${field} ${operation}`,
  )
  await deps.audit.record(caller, `keys.${operation}${noun}`, {
    apiId: write.record.apiId,
    keyId,
    before,
    after: write.record,
  })
  return { ids, record: write.record }
}

/** Whether replacing `held` with `next` takes any id away. */
export function takesAway(held: readonly string[] | undefined, next: readonly string[]): boolean {
  return (held ?? []).some((id) => !next.includes(id))
}

// Unkey's permission for each change.
const ACTIONS: Record<Field, { add: ResourceAction<'rbac'>; remove: ResourceAction<'rbac'> }> = {
  permissions: { add: 'add_permission_to_key', remove: 'remove_permission_from_key' },
  roles: { add: 'add_role_to_key', remove: 'remove_role_from_key' },
}

/** Unkey's rbac permissions for changing a key's permissions or roles: adding, and removing when any is taken away. */
export function allowKeyGrants(principal: Principal, field: Field, adds: boolean, removes: boolean): void {
  const needed = [...(adds ? [ACTIONS[field].add] : []), ...(removes ? [ACTIONS[field].remove] : [])]
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((action) => `rbac.*.${action}`).join(' and ')}`,
    )
  }
}
