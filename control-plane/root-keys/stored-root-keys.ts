import type { Principal } from '../../shared/root-keys/root-key-principal.js'
import type { RootKeySource } from '../../shared/root-keys/root-key-authenticator.js'
import type { RootKeyStore } from '../../shared/store/root-keys/root-key-store.js'
import type { RootKeyUse } from './root-key-use.js'

/**
 * Root keys as the control plane knows them: read from the store on every call, so a revoked root key is refused
 * by the very next call on every control plane. Each use is recorded (root-key-use.ts: at most once a minute).
 */
export class StoredRootKeys implements RootKeySource {
  constructor(
    private readonly store: Pick<RootKeyStore, 'getRootKeyByHash' | 'isBootstrapRootKeyDisabled'>,
    private readonly use: RootKeyUse,
  ) {}

  async principalOf(hash: string): Promise<Principal | null> {
    const rootKey = await this.store.getRootKeyByHash(hash)
    if (!rootKey) return null
    this.use.record(rootKey)
    return { rootKeyId: rootKey.id, permissions: rootKey.permissions }
  }

  bootstrapDisabled(): Promise<boolean> {
    return this.store.isBootstrapRootKeyDisabled()
  }
}
