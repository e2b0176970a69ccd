import type { Caller } from './caller.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import type { NamedRecord, NamedRecords } from './named-records.js'
import { requireAction } from './root-key-auth.js'

/**
 * How a request names a permission or a role: v1 by its id; v2 by its id or its unique name (a permission's slug,
 * a role's name).
 */
export type NamedBy = 'id' | 'id-or-name'

/** The rbac records read and deleted alike; the noun names their rbac actions, log lines and audit actions. */
export type RbacNoun = 'permission' | 'role'

/** Reading and deleting one kind of rbac record, as both wire formats (v1, v2) do it: the root key's action first. */
export interface RbacRecordOperations<T extends NamedRecord> {
  /** The record a request names, if the root key may read its kind (`rbac.*.read_<noun>`); 404 when there is none. */
  read: (deps: ControlPlaneDeps, caller: Caller, named: string, by: NamedBy) => Promise<T>
  /**
   * Deletes the record a request names (`rbac.*.delete_<noun>`); 404 if there is none. One write: every key and role
   * that referenced it stops being granted what it granted (references are resolved, not copied).
   */
  delete: (deps: ControlPlaneDeps, caller: Caller, named: string, by: NamedBy) => Promise<T>
}

export function rbacRecordOperations<T extends NamedRecord>(
  noun: RbacNoun,
  recordsOf: (deps: ControlPlaneDeps) => NamedRecords<T>,
): RbacRecordOperations<T> {
  const deleteAudit = `permissions.delete${noun === 'role' ? 'Role' : 'Permission'}`
  return {
    read: async (deps, caller, named, by) => {
      requireAction(caller.principal, 'rbac', '*', `read_${noun}`)
      const records = recordsOf(deps)
      return by === 'id' ? records.require(named) : records.requireNamed(named)
    },
    delete: async (deps, caller, named, by) => {
      const principal = caller.principal
      requireAction(principal, 'rbac', '*', `delete_${noun}`)
      const records = recordsOf(deps)
      const id = by === 'id' ? named : (await records.requireNamed(named)).id
      const deleted = await records.delete(id)
      caller.log.info({ [`${noun}Id`]: deleted.id, rootKeyId: principal.rootKeyId }, `${noun} deleted`)
      const before: NamedRecord = deleted
      await deps.audit.record(caller, deleteAudit, { before: { ...before } })
      return deleted
    },
  }
}
