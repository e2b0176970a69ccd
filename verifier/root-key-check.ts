import { hashKey, secretsEqual } from '../shared/key-material.js'
import {
  BOOTSTRAP_ROOT_KEY_ADDRESS,
  livePermissions,
  rootKeyAddress,
  type BootstrapRootKeyEntity,
  type RootKeyEntity,
} from '../shared/root-key-entity.js'
import { BOOTSTRAP_ID, rootKeyHashOf, rootKeyNotValid, type Principal } from '../shared/root-key-principal.js'

/** Entities as verdicts see them: KeyVerifier.entity (cached by address, absences too, under the staleness bound). */
export interface EntitySource {
  entity<T>(address: string): T | null | Promise<T | null>
}

const BOOTSTRAP: Principal = Object.freeze({ rootKeyId: BOOTSTRAP_ID, permissions: Object.freeze(['*']) })

/**
 * Root-key authentication where v2 needs it beside verification (keys.verifyKey), on the verifier and on the
 * control plane alike. Stored root keys are known by their hash from the entities the control plane writes beside
 * them (shared/root-key-entity.ts): cached like keys, dropped by the same change events, read afresh beyond the
 * staleness bound — so a revoked root key is refused within the revocation bound. KEYGATE_ROOT_KEY, when this
 * process has it, is compared by hash in constant time and refused while the store has it turned off. Only hashes
 * are held; nothing is logged.
 */
export class RootKeyCheck {
  private readonly bootstrapHash: string | undefined

  constructor(
    private readonly entities: EntitySource,
    bootstrapRootKey: string | undefined,
  ) {
    this.bootstrapHash = bootstrapRootKey === undefined ? undefined : hashKey(bootstrapRootKey)
  }

  /**
   * The caller named by an `Authorization` header: v2's 400 for a missing or malformed header, 401 for a root key
   * that is unknown, revoked, or the bootstrap key turned off. Synchronous when the cache answers.
   */
  principalOf(header: string | string[] | undefined): Principal | Promise<Principal> {
    const hash = rootKeyHashOf(header)
    if (this.bootstrapHash !== undefined && secretsEqual(hash, this.bootstrapHash)) {
      return settle(this.entities.entity<BootstrapRootKeyEntity>(BOOTSTRAP_ROOT_KEY_ADDRESS), bootstrapPrincipal)
    }
    return settle(this.entities.entity<RootKeyEntity>(rootKeyAddress(hash)), storedPrincipal)
  }
}

function bootstrapPrincipal(switched: BootstrapRootKeyEntity | null): Principal {
  if (switched?.disabled) throw rootKeyNotValid()
  return BOOTSTRAP
}

function storedPrincipal(entity: RootKeyEntity | null): Principal {
  // Unknown and revoked (a tombstone) alike: refused.
  const permissions = entity === null ? undefined : livePermissions(entity)
  if (permissions === undefined) throw rootKeyNotValid()
  return { rootKeyId: entity!.id, permissions }
}

function settle<T, R>(value: T | Promise<T>, then: (value: T) => R): R | Promise<R> {
  return value instanceof Promise ? value.then(then) : then(value)
}
