import { Cluster, type Redis } from 'ioredis'
import type { RootKeyRecord } from '../../keys/records.js'
import { redisKeys } from '../redis/redis-keys.js'
import type { AfterWrite } from '../redis/redis-replica-wait.js'
import { storeCall } from '../redis/redis-store-call.js'
import { CREATE_ROOT_KEY_SCRIPT, REVOKE_ROOT_KEY_SCRIPT, TOUCH_ROOT_KEY_SCRIPT } from './redis-root-key-scripts.js'
import type { RootKeyStore } from './root-key-store.js'

interface RootKeyScripts {
  createRootKey(...keysAndArgs: string[]): Promise<number>
  revokeRootKey(...keysAndArgs: string[]): Promise<[string, string] | null>
  touchRootKey(...keysAndArgs: string[]): Promise<number>
}

const SLOT = [redisKeys.rootKeys, redisKeys.rootKeyIds, redisKeys.rootKeysUsed, redisKeys.revokedRootKeys]
const LEGACY_PATTERN = redisKeys.legacyRootKey('*')

/** What is stored of a root key (its last use is kept apart, so that recording one never rewrites the record). */
function documentOf({ lastUsedAt: _lastUsedAt, ...record }: RootKeyRecord): string {
  return JSON.stringify(record)
}

function recordOf(doc: string, used: string | null | undefined): RootKeyRecord {
  const record = JSON.parse(doc) as RootKeyRecord
  if (used) record.lastUsedAt = Number(used)
  return record
}

/**
 * Root keys on Redis, all in the `{root}` slot (redis-keys.ts), written by the scripts of
 * redis-root-key-scripts.ts. Root keys stored under the legacy layout (`kg:root:<hash>`, one slot each) are moved
 * in when first met by a lookup by hash (a management call), and all of them, once, by a control plane's start or a
 * lookup by id (a revoke or roll). A list only reads: it shows legacy root keys where they are until they are moved,
 * and once they all have been (a marker says so), it no longer looks for them.
 */
export class RedisRootKeyStore implements RootKeyStore {
  private readonly redis: Redis & RootKeyScripts
  private readonly nodes: () => Redis[]

  /** `afterWrite` runs after every write that changed something (the store's replica confirmation). */
  constructor(
    redis: Redis | Cluster,
    private readonly afterWrite: AfterWrite,
  ) {
    redis.defineCommand('createRootKey', { numberOfKeys: SLOT.length, lua: CREATE_ROOT_KEY_SCRIPT })
    redis.defineCommand('revokeRootKey', { numberOfKeys: SLOT.length, lua: REVOKE_ROOT_KEY_SCRIPT })
    redis.defineCommand('touchRootKey', { numberOfKeys: SLOT.length, lua: TOUCH_ROOT_KEY_SCRIPT })
    this.redis = redis as unknown as Redis & RootKeyScripts
    this.nodes = () => (redis instanceof Cluster ? redis.nodes('master') : [redis])
  }

  async createRootKey(record: RootKeyRecord): Promise<boolean> {
    const created = await storeCall(() => this.redis.createRootKey(...SLOT, record.hash, record.id, documentOf(record)))
    if (created !== 1) return false
    await this.afterWrite()
    return true
  }

  async getRootKeyByHash(hash: string): Promise<RootKeyRecord | null> {
    const [doc, used] = await storeCall(() =>
      Promise.all([this.redis.hget(redisKeys.rootKeys, hash), this.redis.hget(redisKeys.rootKeysUsed, hash)]),
    )
    return doc === null ? this.moveLegacy(redisKeys.legacyRootKey(hash)) : recordOf(doc, used)
  }

  async getRootKeyById(id: string): Promise<RootKeyRecord | null> {
    let hash = await storeCall(() => this.redis.hget(redisKeys.rootKeyIds, id))
    // Legacy root keys are in no index by id: one not moved yet is found by moving them all (once).
    if (hash === null && (await this.moveLegacyOnce()))
      hash = await storeCall(() => this.redis.hget(redisKeys.rootKeyIds, id))
    const record = hash === null ? null : await this.getRootKeyByHash(hash)
    return record?.id === id ? record : null
  }

  async listRootKeys(): Promise<RootKeyRecord[]> {
    const [docs, used] = await storeCall(() =>
      Promise.all([this.redis.hgetall(redisKeys.rootKeys), this.redis.hgetall(redisKeys.rootKeysUsed)]),
    )
    const records = Object.entries(docs).map(([hash, doc]) => recordOf(doc, used[hash]))
    const listed = new Set(records.map((record) => record.hash))
    for (const legacy of await this.legacyRecords()) if (!listed.has(legacy.hash)) records.push(legacy)
    return records.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  }

  async moveLegacyRootKeys(): Promise<void> {
    await this.moveLegacyOnce()
  }

  async revokeRootKey(id: string): Promise<RootKeyRecord | null> {
    return this.revoke(id)
  }

  async rollRootKey(id: string, next: RootKeyRecord): Promise<RootKeyRecord | null> {
    return this.revoke(id, next)
  }

  async touchRootKey(hash: string, atMs: number): Promise<void> {
    await storeCall(() => this.redis.touchRootKey(...SLOT, hash, String(atMs)))
  }

  async isBootstrapRootKeyDisabled(): Promise<boolean> {
    return (await storeCall(() => this.redis.get(redisKeys.bootstrapRootKey))) === 'disabled'
  }

  async setBootstrapRootKeyDisabled(disabled: boolean): Promise<void> {
    await storeCall(async () => {
      if (disabled) await this.redis.set(redisKeys.bootstrapRootKey, 'disabled')
      else await this.redis.del(redisKeys.bootstrapRootKey)
    })
    await this.afterWrite()
  }

  private async revoke(id: string, next?: RootKeyRecord): Promise<RootKeyRecord | null> {
    const args = next ? [id, next.hash, next.id, documentOf(next)] : [id]
    const removed = await storeCall(() => this.redis.revokeRootKey(...SLOT, ...args))
    if (!removed) return null
    await this.afterWrite()
    const record = recordOf(...removed)
    // A legacy copy left by a move cut short: the revoked set already keeps it out; this tidies it away.
    await storeCall(() => this.redis.del(redisKeys.legacyRootKey(record.hash)))
    return record
  }

  /** Moves one legacy root key into the slot (unless it was revoked); answers it, or null if there is none. */
  private async moveLegacy(key: string): Promise<RootKeyRecord | null> {
    const doc = await storeCall(() => this.redis.get(key))
    if (doc === null) return null
    const record = JSON.parse(doc) as RootKeyRecord
    const moved = await storeCall(() => this.redis.createRootKey(...SLOT, record.hash, record.id, documentOf(record)))
    if (moved === 1) await this.afterWrite()
    await storeCall(() => this.redis.del(key))
    return moved === -1 ? null : record
  }

  /** The keys of every legacy root key not moved yet (SCAN on every master); none once they all have been moved. */
  private async legacyKeys(): Promise<string[]> {
    if ((await storeCall(() => this.redis.exists(redisKeys.legacyRootKeysMoved))) === 1) return []
    const found: string[] = []
    for (const node of this.nodes()) {
      let cursor = '0'
      do {
        const [next, keys] = await storeCall(() => node.scan(cursor, 'MATCH', LEGACY_PATTERN, 'COUNT', 1_000))
        found.push(...keys)
        cursor = next
      } while (cursor !== '0')
    }
    return found
  }

  /** The legacy root keys as they are, read only: a revoked one (a copy left by a move cut short) is left out. */
  private async legacyRecords(): Promise<RootKeyRecord[]> {
    const records: RootKeyRecord[] = []
    for (const key of await this.legacyKeys()) {
      const doc = await storeCall(() => this.redis.get(key))
      if (doc === null) continue
      const record = JSON.parse(doc) as RootKeyRecord
      if ((await storeCall(() => this.redis.sismember(redisKeys.revokedRootKeys, record.hash))) === 0)
        records.push(record)
    }
    return records
  }

  /** Moves every legacy root key into the slot, once: then marks the store as moved. Whether there was any to move. */
  private async moveLegacyOnce(): Promise<boolean> {
    const keys = await this.legacyKeys()
    for (const key of keys) await this.moveLegacy(key)
    if ((await storeCall(() => this.redis.exists(redisKeys.legacyRootKeysMoved))) === 0)
      await storeCall(() => this.redis.set(redisKeys.legacyRootKeysMoved, '1'))
    return keys.length > 0
  }
}
