import type { RootKeyRecord } from '../../keys/records.js'
import type { RootKeyStore } from './root-key-store.js'

/** Root keys in process memory (the embedded default); each method is one synchronous step, so atomic. */
export class MemoryRootKeyStore implements RootKeyStore {
  private readonly byHash = new Map<string, RootKeyRecord>()
  private readonly hashById = new Map<string, string>()
  private bootstrapDisabled = false

  async createRootKey(record: RootKeyRecord): Promise<boolean> {
    if (this.byHash.has(record.hash) || this.hashById.has(record.id)) return false
    this.add(record)
    return true
  }

  async getRootKeyByHash(hash: string): Promise<RootKeyRecord | null> {
    const record = this.byHash.get(hash)
    return record ? structuredClone(record) : null
  }

  async getRootKeyById(id: string): Promise<RootKeyRecord | null> {
    return this.getRootKeyByHash(this.hashById.get(id) ?? '')
  }

  async listRootKeys(): Promise<RootKeyRecord[]> {
    return [...this.byHash.values()]
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((record) => structuredClone(record))
  }

  /** Process memory has no legacy layout. */
  async moveLegacyRootKeys(): Promise<void> {}

  async revokeRootKey(id: string): Promise<RootKeyRecord | null> {
    const hash = this.hashById.get(id)
    const record = hash === undefined ? undefined : this.byHash.get(hash)
    if (!record) return null
    this.byHash.delete(record.hash)
    this.hashById.delete(id)
    return record
  }

  async rollRootKey(id: string, next: RootKeyRecord): Promise<RootKeyRecord | null> {
    if (!this.hashById.has(id)) return null
    if (this.byHash.has(next.hash) || this.hashById.has(next.id)) throw new Error('the new root key is taken')
    const old = await this.revokeRootKey(id)
    this.add(next)
    return old
  }

  async touchRootKey(hash: string, atMs: number): Promise<void> {
    const record = this.byHash.get(hash)
    if (record && (record.lastUsedAt === undefined || record.lastUsedAt < atMs)) record.lastUsedAt = atMs
  }

  async isBootstrapRootKeyDisabled(): Promise<boolean> {
    return this.bootstrapDisabled
  }

  async setBootstrapRootKeyDisabled(disabled: boolean): Promise<void> {
    this.bootstrapDisabled = disabled
  }

  private add(record: RootKeyRecord): void {
    this.byHash.set(record.hash, structuredClone(record))
    this.hashById.set(record.id, record.hash)
  }
}
