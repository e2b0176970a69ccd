import { ApiError, invalid } from '../../../shared/errors/errors.js'
import type { KeyRecord } from '../../../shared/keys/records.js'
import type { ResourceAction } from '../../../shared/root-keys/root-key-actions.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import { allowKeyGrants, takesAway, type GrantField } from './key-grants.js'
import type { RecordRef } from '../../permissions/rbac.js'
import { requireAction, requireKeyPermission } from '../../root-keys/root-key-auth.js'
import { LIMITS } from '../../input-limits.js'

/** What the change does to the key's permissions (roles): adds to them, replaces them, or takes some away. */
export type GrantChange = 'add' | 'set' | 'remove'

/** A permission (role) the change names: by id, by name, or by a value that may be either (an id that exists wins). */
export type GrantRef = RecordRef | { idOrName: string }

/**
 * What becomes of a name no permission (role) has:
 * - `create-if-asked` (Unkey v1's add and set): made when its reference asks (`create: true`) and the root key may
 *   create it (else 403); otherwise a 404.
 * - `create-permissions` (Unkey v2's add and set): a permission is made when the root key may create permissions
 *   (else 403), and a key that would then hold too many is refused (400) before any is made; a role is a 404.
 * - `not-found` (Unkey v2's remove): a 404.
 * - `skip` (Unkey v1's remove): it names nothing, so removing it removes nothing (Unkey answers 200).
 * An id with no record is a 404 but under `skip`.
 */
export type MissingNames = 'create-if-asked' | 'create-permissions' | 'not-found' | 'skip'

/**
 * Which of Unkey's rbac actions the root key needs beside update_key on the key's api, which every change asks: a
 * root key with no right on an api must not change what that api's keys are granted (Unkey v1 asked only the rbac
 * actions; Keygate asks update_key as v2 does).
 * - `by-effect` (Unkey v1's rule): the add action to add or set, the remove action to remove, and to set a list that
 *   leaves out one the key holds (it takes that one away).
 * - `by-operation` (Unkey v2's handlers, `rbac.T`): a fixed list per operation (BY_OPERATION).
 */
export type RbacRule = 'by-effect' | 'by-operation'

export interface ChangeKeyGrantsInput {
  keyId: string
  field: GrantField
  change: GrantChange
  refs: readonly GrantRef[]
  missingNames: MissingNames
  rbacRule: RbacRule
}

// Unkey v2 asks rbac actions for some operations only: removeRoles and setRoles ask none (so a root key with only
// update_key may set a key's roles but not add one: Unkey's rule, kept so that root keys written for Unkey's v2 work
// alike).
const BY_OPERATION: Record<GrantField, Record<GrantChange, ResourceAction<'rbac'>[]>> = {
  permissions: {
    add: ['add_permission_to_key'],
    remove: ['remove_permission_from_key'],
    set: ['add_permission_to_key', 'remove_permission_from_key'],
  },
  roles: { add: ['add_role_to_key'], remove: [], set: [] },
}

const ID_FIELD = { permissions: 'permissionIds', roles: 'roleIds' } as const
const NOUN = { permissions: 'Permissions', roles: 'Roles' } as const

/** The ids of the field on a key record. */
const grantIdsOf = (record: KeyRecord, field: GrantField): string[] => record[ID_FIELD[field]] ?? []

/**
 * Adds, replaces or removes a key's permissions or roles (keys.add|set|remove{Permissions,Roles}). In order: the key
 * (404), the root key's right to change it (403, `rbacRule`), the names (resolved, and made, as `missingNames` says),
 * the right again now that the ids are known, then the write: a compare-and-set on the freshest record, which checks
 * the right once more and that the key holds at most LIMITS.namesPerKey of the field (400). Audited as
 * `keys.<change><Field>`. Answers the ids the request named and those the key holds directly once changed.
 */
export async function changeKeyGrants(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ChangeKeyGrantsInput,
): Promise<{ named: string[]; held: string[] }> {
  const { keyId, field, change } = input
  const idField = ID_FIELD[field]
  const current = await deps.writes.readKey(keyId)
  const allow = (record: KeyRecord, ids: readonly string[] | undefined) => allowChange(caller, input, record, ids)
  allow(current, undefined)
  const nextOf = (record: KeyRecord, ids: readonly string[]): string[] => {
    const existing = grantIdsOf(record, field)
    if (change === 'set') return [...ids]
    if (change === 'add') return [...existing, ...ids]
    return existing.filter((id) => !ids.includes(id))
  }
  const ids = await resolveNames(deps, caller, input, (planned) => new Set(nextOf(current, planned)).size)
  allow(current, ids)
  let before: KeyRecord | undefined
  const write = await deps.writes.updateKey(
    keyId,
    (record) => ({ [idField]: nextOf(record, ids) }),
    (record) => {
      before = record
      allow(record, ids)
      if (new Set(nextOf(record, ids)).size > LIMITS.namesPerKey) {
        throw invalid(field, `a key holds at most ${LIMITS.namesPerKey}`)
      }
    },
  )
  caller.log.info(
    { keyId, [field]: write.record[idField]?.length ?? 0, rootKeyId: caller.principal.rootKeyId },
    `key ${field} ${change}`,
  )
  await deps.audit.record(caller, `keys.${change}${NOUN[field]}`, {
    apiId: write.record.apiId,
    keyId,
    before,
    after: write.record,
  })
  return { named: ids, held: grantIdsOf(write.record, field) }
}

/**
 * Throws the contract's 403 unless the root key may make the change to `record`: asked of the key as read, before any
 * name is resolved (`ids` undefined), then with the ids, and again of the record the write applies to.
 */
function allowChange(
  caller: Caller,
  input: ChangeKeyGrantsInput,
  record: KeyRecord,
  ids: readonly string[] | undefined,
) {
  const { principal } = caller
  const { field, change } = input
  requireKeyPermission(principal, record, 'update_key')
  if (input.rbacRule === 'by-operation') {
    requireAction(principal, 'rbac', '*', ...BY_OPERATION[field][change])
    return
  }
  const removes =
    change === 'remove' || (change === 'set' && ids !== undefined && takesAway(grantIdsOf(record, field), ids))
  allowKeyGrants(principal, field, change !== 'remove', removes)
}

/**
 * The ids of the records the change names, as `missingNames` says; `heldAfter` counts what the key would hold of the
 * field given the ids found, so that a key with no room is refused before a record is made for it.
 */
async function resolveNames(
  deps: ControlPlaneDeps,
  caller: Caller,
  input: ChangeKeyGrantsInput,
  heldAfter: (ids: readonly string[]) => number,
): Promise<string[]> {
  const { rbac } = deps
  const { principal } = caller
  const { field, missingNames } = input
  const permissions = field === 'permissions'
  const refs = await Promise.all(
    input.refs.map(async (ref) => {
      if (!('idOrName' in ref)) return ref
      const record = permissions ? await rbac.permissions.get(ref.idOrName) : await rbac.roles.get(ref.idOrName)
      return record ? { id: ref.idOrName } : { name: ref.idOrName }
    }),
  )
  const idsOf = (named: RecordRef[], createMissing: boolean) =>
    permissions
      ? rbac.permissionIdsOf(named, principal, createMissing)
      : rbac.roleIdsOf(named, principal, createMissing)
  const withoutCreate = ({ id, name }: RecordRef): RecordRef => ({ id, name })
  switch (missingNames) {
    case 'create-if-asked':
      return idsOf(refs, false)
    case 'skip':
      return knownIds(refs, (ref) => idsOf([withoutCreate(ref)], false))
    case 'not-found':
      return idsOf(refs.map(withoutCreate), false)
    case 'create-permissions':
      if (!permissions) return idsOf(refs.map(withoutCreate), false)
      return rbac.permissionIdsOf(refs.map(withoutCreate), principal, true, (planned) => {
        const existing = planned.flatMap((step) => ('id' in step ? [step.id] : []))
        const made = new Set(planned.flatMap((step) => ('create' in step ? [step.create] : []))).size
        if (heldAfter(existing) + made > LIMITS.namesPerKey) {
          throw invalid(field, `a key holds at most ${LIMITS.namesPerKey}`)
        }
      })
  }
}

/** The ids of the references that name an existing record; the others are skipped. */
async function knownIds(refs: RecordRef[], resolve: (ref: RecordRef) => Promise<string[]>): Promise<string[]> {
  const ids: string[] = []
  for (const ref of refs) {
    try {
      ids.push(...(await resolve(ref)))
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'NOT_FOUND')) throw err
    }
  }
  return ids
}
