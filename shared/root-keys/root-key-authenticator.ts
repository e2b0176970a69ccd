import { hashKey, secretsEqual } from '../keys/key-material.js'
import { BOOTSTRAP_ID, bearerRootKeyOf, rootKeyNotValid, type Principal } from './root-key-principal.js'

/**
 * Where an authenticator looks root keys up, by hash (only hashes are held). The control plane reads its store on
 * every call; a verifier reads its entity cache (root keys mirrored as entities, under the staleness bound). Each
 * answer may be synchronous (a cache hit) or a promise.
 */
export interface RootKeySource {
  /** The principal of the live root key with this hash; null for one unknown or revoked. */
  principalOf(hash: string): Principal | null | Promise<Principal | null>
  /** Whether KEYGATE_ROOT_KEY has been turned off in the store. */
  bootstrapDisabled(): boolean | Promise<boolean>
}

const BOOTSTRAP: Principal = Object.freeze({ rootKeyId: BOOTSTRAP_ID, permissions: Object.freeze(['*']) })

/**
 * Root-key authentication, the one code path for every caller that needs a root key: the control plane's management
 * calls and v2's verifyKey, on the control plane and on the verifier. `Authorization: Bearer <root key>` is hashed;
 * KEYGATE_ROOT_KEY, when this process has it, is compared by hash in constant time and refused while the store has
 * it turned off; any other root key is looked up by hash in the source. Errors are the contract's UNAUTHORIZED
 * (shared/root-keys/root-key-principal.ts says what each wire answers). Nothing is logged.
 */
export class RootKeyAuthenticator {
  private readonly bootstrapHash: string | undefined

  constructor(
    private readonly source: RootKeySource,
    bootstrapRootKey: string | undefined,
  ) {
    this.bootstrapHash = bootstrapRootKey === undefined ? undefined : hashKey(bootstrapRootKey)
  }

  /** The caller an `Authorization` header names. Synchronous when the source answers from memory. */
  principalOf(header: string | string[] | undefined): Principal | Promise<Principal> {
    const hash = hashKey(bearerRootKeyOf(header))
    if (this.bootstrapHash !== undefined && secretsEqual(hash, this.bootstrapHash)) {
      const disabled = this.source.bootstrapDisabled()
      return disabled instanceof Promise ? disabled.then(bootstrapPrincipal) : bootstrapPrincipal(disabled)
    }
    const found = this.source.principalOf(hash)
    return found instanceof Promise ? found.then(storedPrincipal) : storedPrincipal(found)
  }
}

function bootstrapPrincipal(disabled: boolean): Principal {
  if (disabled) throw rootKeyNotValid()
  return BOOTSTRAP
}

function storedPrincipal(principal: Principal | null): Principal {
  if (principal === null) throw rootKeyNotValid()
  return principal
}
