import { Rbac } from '../../control-plane/permissions/rbac.js'
import type { Principal } from '../../control-plane/root-keys/root-key-auth.js'
import type { ManagementStore } from '../../shared/store/management-store.js'

/** A principal that may do anything: for tests that set records up straight in the store. */
export const EVERYTHING: Principal = { rootKeyId: 'test', permissions: ['*'] }

/** Roles and permissions written straight to a store (its change feed tells the verifiers, as for any write). */
export function grantsOn(backend: { store: ManagementStore }): Rbac {
  return new Rbac(backend.store.entities, { now: () => Date.now() }, () => {})
}
