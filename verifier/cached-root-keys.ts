import {
  BOOTSTRAP_ROOT_KEY_ADDRESS,
  livePermissions,
  rootKeyAddress,
  type BootstrapRootKeyEntity,
  type RootKeyEntity,
} from '../shared/root-keys/root-key-entity.js'
import type { Principal } from '../shared/root-keys/root-key-principal.js'
import type { RootKeySource } from '../shared/root-keys/root-key-authenticator.js'

/** Entities as verdicts see them: KeyVerifier.entity (cached by address, absences too, under the staleness bound). */
export interface EntitySource {
  entity<T>(address: string): T | null | Promise<T | null>
}

/**
 * Root keys as a verifier knows them: from the entities the control plane writes beside each stored root key
 * (shared/root-keys/root-key-entity.ts), cached like keys, dropped by the same change events, read afresh beyond the
 * staleness bound — so a revoked root key is refused within the revocation bound. A cached root key's principal is made
 * once.
 */
export class CachedRootKeys implements RootKeySource {
  // Keyed by the cached entity: a changed root key is another entity, and a principal dies with its entity.
  private readonly principals = new WeakMap<RootKeyEntity, Principal>()

  constructor(private readonly entities: EntitySource) {}

  principalOf(hash: string): Principal | null | Promise<Principal | null> {
    const entity = this.entities.entity<RootKeyEntity>(rootKeyAddress(hash))
    return entity instanceof Promise
      ? entity.then((found) => this.principalOfEntity(found))
      : this.principalOfEntity(entity)
  }

  bootstrapDisabled(): boolean | Promise<boolean> {
    const switched = this.entities.entity<BootstrapRootKeyEntity>(BOOTSTRAP_ROOT_KEY_ADDRESS)
    return switched instanceof Promise
      ? switched.then((found) => found?.disabled === true)
      : switched?.disabled === true
  }

  private principalOfEntity(entity: RootKeyEntity | null): Principal | null {
    if (entity === null) return null
    let principal = this.principals.get(entity)
    if (principal === undefined) {
      // Unknown and revoked (a tombstone) alike: no principal.
      const permissions = livePermissions(entity)
      if (permissions === undefined) return null
      principal = Object.freeze({ rootKeyId: entity.id, permissions: Object.freeze([...permissions]) })
      this.principals.set(entity, principal)
    }
    return principal
  }
}
