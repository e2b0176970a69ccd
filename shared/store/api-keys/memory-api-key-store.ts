import { changedKeyFields } from '../../keys/key-changes.js'
import type { CreditNotice } from '../../keys/credit-notice.js'
import type { ChangeKind } from '../../change-event.js'
import { MAX_CREDITS, type CreditOp, type Spend } from '../../keys/credits.js'
import { applyKeyPatch, type ApiRecord, type KeyPatch, type KeyRecord, type NewKeyRecord } from '../../keys/records.js'
import { shardOf } from '../../shards.js'
import { WriteConflictError } from '../../errors/errors.js'
import type { ApiKeyStore, KeyPage, KeyWrite } from './api-key-store.js'
import type { MemoryChangeSnapshotStore } from '../change-snapshots/memory-change-snapshot-store.js'
import type { MemoryChangeLogStore } from '../change-log/memory-change-log-store.js'
import { SortedIds } from '../sorted-ids.js'

/** Apis, keys and credits in process memory (the embedded default); each write is one synchronous step, so atomic. */
export class MemoryApiKeyStore implements ApiKeyStore {
  private readonly apis = new Map<string, ApiRecord>()
  private readonly apiKeyIds = new Map<string, SortedIds>()
  /** `<apiId> <ownerId>` → ids: listKeys by externalId costs the page, as on Redis. */
  private readonly ownerKeyIds = new Map<string, SortedIds>()
  private readonly keysByHash = new Map<string, KeyRecord>()
  private readonly hashById = new Map<string, string>()
  /** When each credit-carrying key was last refilled (its balance lives on the record, outside its revision). */
  private readonly refilledAt = new Map<string, number>()

  /** `identityIdOf` names a key's identity in the snapshot of its write. */
  constructor(
    private readonly changes: MemoryChangeLogStore,
    private readonly snapshots: MemoryChangeSnapshotStore,
    private readonly identityIdOf: (externalId: string) => string | undefined,
  ) {}

  async createApi(api: ApiRecord): Promise<void> {
    this.apis.set(api.id, structuredClone(api))
    this.apiKeyIds.set(api.id, new SortedIds())
  }

  async getApi(apiId: string): Promise<ApiRecord | null> {
    const api = this.apis.get(apiId)
    return api && !api.deleting ? structuredClone(api) : null
  }

  async apiExists(apiId: string): Promise<boolean> {
    return (await this.getApi(apiId)) !== null
  }

  async markApiDeleting(apiId: string): Promise<ApiRecord | null> {
    const api = this.apis.get(apiId)
    if (!api) return null
    api.deleting = true
    return structuredClone(api)
  }

  async apiExistsOrDeleting(apiId: string): Promise<'exists' | 'deleting' | 'absent'> {
    const api = this.apis.get(apiId)
    return !api ? 'absent' : api.deleting ? 'deleting' : 'exists'
  }

  async removeApi(apiId: string): Promise<void> {
    this.apis.delete(apiId)
    this.apiKeyIds.delete(apiId)
  }

  async createKey(input: NewKeyRecord): Promise<KeyWrite | false> {
    if (this.keysByHash.has(input.hash)) return false
    const write = this.write(input, 'created')
    if (input.remaining !== undefined) this.refilledAt.set(input.hash, input.createdAt)
    this.hashById.set(input.id, input.hash)
    this.indexOf(this.apiKeyIds, input.apiId).add(input.id)
    if (input.ownerId !== undefined)
      this.indexOf(this.ownerKeyIds, ownerIndexKey(input.apiId, input.ownerId)).add(input.id)
    return write
  }

  async getKeyById(keyId: string): Promise<KeyRecord | null> {
    const hash = this.hashById.get(keyId)
    return hash === undefined ? null : this.getKeyByHash(hash)
  }

  async getKeyByHash(hash: string): Promise<KeyRecord | null> {
    const record = this.keysByHash.get(hash)
    return record ? structuredClone(record) : null
  }

  async *scanKeyHashes(): AsyncIterable<string[]> {
    // A Map's iterator survives changes: a key present throughout is visited, as SCAN promises.
    let batch: string[] = []
    for (const hash of this.keysByHash.keys()) {
      batch.push(hash)
      if (batch.length === SCAN_BATCH) {
        yield batch
        batch = []
      }
    }
    if (batch.length > 0) yield batch
  }

  async updateKey(keyId: string, patch: KeyPatch, expectedRev: number, nowMs: number): Promise<KeyWrite | null> {
    const hash = this.hashById.get(keyId)
    const current = hash === undefined ? undefined : this.keysByHash.get(hash)
    if (!current) return null
    if (current.rev !== expectedRev) throw new WriteConflictError()
    const previousOwner = current.ownerId
    const next = applyKeyPatch(current, structuredClone(patch), nowMs)
    const write = this.write(next, 'updated', changedKeyFields(current, next))
    if (patch.remaining === null) this.refilledAt.delete(current.hash)
    else if (patch.remaining !== undefined || patch.refill) this.refilledAt.set(current.hash, nowMs)
    if (previousOwner !== write.record.ownerId) {
      if (previousOwner !== undefined) this.ownerKeyIds.get(ownerIndexKey(current.apiId, previousOwner))?.delete(keyId)
      if (write.record.ownerId !== undefined) {
        this.indexOf(this.ownerKeyIds, ownerIndexKey(current.apiId, write.record.ownerId)).add(keyId)
      }
    }
    return write
  }

  async deleteKey(keyId: string): Promise<KeyWrite | null> {
    const hash = this.hashById.get(keyId)
    const current = hash === undefined ? undefined : this.keysByHash.get(hash)
    if (!current) return null
    const { rev: _rev, ...rest } = current
    const write = this.write(rest, 'deleted')
    this.keysByHash.delete(current.hash)
    this.hashById.delete(keyId)
    this.apiKeyIds.get(current.apiId)?.delete(keyId)
    if (current.ownerId !== undefined)
      this.ownerKeyIds.get(ownerIndexKey(current.apiId, current.ownerId))?.delete(keyId)
    return write
  }

  async listKeys(apiId: string, options: { cursor?: string; limit: number; ownerId?: string }): Promise<KeyPage> {
    const ids =
      options.ownerId === undefined
        ? this.apiKeyIds.get(apiId)
        : this.ownerKeyIds.get(ownerIndexKey(apiId, options.ownerId))
    const total = this.apiKeyIds.get(apiId)?.size ?? 0
    if (!ids) return { keys: [], total }
    const keys: KeyRecord[] = []
    for (const id of ids.after(options.cursor)) {
      const record = this.keysByHash.get(this.hashById.get(id) ?? '')
      if (!record) continue
      keys.push(structuredClone(record))
      if (keys.length === options.limit) return { keys, total, cursor: id }
    }
    return { keys, total }
  }

  async spendCredits(
    hash: string,
    cost: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
    notice?: CreditNotice,
  ): Promise<Spend | null> {
    const record = this.keysByHash.get(hash)
    if (!record || record.remaining === undefined) return null
    if (refill && (this.refilledAt.get(hash) ?? 0) < refill.boundary) {
      record.remaining = refill.amount
      this.refilledAt.set(hash, nowMs)
    }
    if (record.remaining < cost) return { ok: false, remaining: record.remaining }
    const before = record.remaining
    record.remaining -= cost
    if (notice) this.changes.noteCredits(shardOf(hash), notice, before, record.remaining)
    return { ok: true, remaining: record.remaining }
  }

  async updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
    notice?: CreditNotice,
  ): Promise<number | null> {
    const record = this.keysByHash.get(this.hashById.get(keyId) ?? '')
    if (!record || record.remaining === undefined) return null
    if (refill && (this.refilledAt.get(record.hash) ?? 0) < refill.boundary) {
      record.remaining = refill.amount
      this.refilledAt.set(record.hash, nowMs)
    }
    const before = record.remaining
    if (op === 'set') this.refilledAt.set(record.hash, nowMs)
    const next =
      op === 'set' ? value : op === 'increment' ? before + value : op === 'take' ? 0 : Math.max(0, before - value)
    record.remaining = Math.min(next, MAX_CREDITS)
    if (notice) this.changes.noteCredits(shardOf(record.hash), notice, before, record.remaining)
    return op === 'take' ? before : record.remaining
  }

  private indexOf(indexes: Map<string, SortedIds>, name: string): SortedIds {
    let ids = indexes.get(name)
    if (!ids) indexes.set(name, (ids = new SortedIds()))
    return ids
  }

  /** Revision bump, record, log append and publish: one synchronous step, like the Redis script. */
  private write(input: NewKeyRecord, kind: ChangeKind, fields: string[] = []): KeyWrite {
    const event = this.changes.append(shardOf(input.hash), kind, input.id, input.hash, input.apiId, fields)
    const { remaining: credits, ...doc } = input
    const identityId = input.ownerId === undefined ? undefined : this.identityIdOf(input.ownerId)
    this.snapshots.keep(event.shard, event.rev, {
      doc,
      ...(credits !== undefined ? { credits } : {}),
      ...(identityId !== undefined ? { identityId } : {}),
    })
    const record: KeyRecord = { ...structuredClone(input), rev: event.rev }
    if (kind !== 'deleted') this.keysByHash.set(record.hash, record)
    return { record: structuredClone(record), event: { ...event } }
  }
}

const ownerIndexKey = (apiId: string, ownerId: string) => `${apiId} ${ownerId}`

// Hashes per batch of scanKeyHashes, as a Redis SCAN answers about as many.
const SCAN_BATCH = 1_000
