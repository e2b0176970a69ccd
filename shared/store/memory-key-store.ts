import { randomBytes } from 'node:crypto'
import { CHANGE_LOG_MAX_LEN, type ChangeEvent, type ChangeKind } from '../change-event.js'
import { LRUCache } from 'lru-cache'
import { wallMicros } from '../clock.js'
import { MAX_CREDITS, type CreditOp, type Spend } from '../credits.js'
import { AUDIT_LOG_MAX_LEN, type AuditEntry, type NewAuditEntry } from '../audit.js'
import { bucketTimes, type Bucket, type Granularity, type Outcome, type UsageIncrement } from '../analytics.js'
import { windowStart, type CounterOwner, type ExactLimit, type RateCounter } from '../ratelimit.js'
import type { MemoryChangeFeed } from '../feed/memory-change-feed.js'
import {
  applyKeyPatch,
  type ApiRecord,
  type KeyPatch,
  type KeyRecord,
  type NewKeyRecord,
  type RootKeyRecord,
} from '../records.js'
import { MemoryRootKeyStore } from './memory-root-key-store.js'
import { MemoryEntityStore } from './memory-entity-store.js'
import { MemoryNamespaceCounters } from './memory-namespace-counters.js'
import type { StoredEntity } from '../entity.js'
import type { EntityWrite, EntityWriteRefused, IndexPage } from './entity-store.js'
import { SHARD_COUNT, shardOf } from '../shards.js'
import { WriteConflictError } from '../errors.js'
import { LOG_TRIMMED, type KeyPage, type KeyStore, type KeyWrite, type RevisionSnapshot } from './key-store.js'
import { SortedIds } from './sorted-ids.js'

/**
 * The embedded default: a real KeyStore in process memory, passing the same contract suite as Redis.
 * Everything is lost when the process exits.
 */
export class MemoryKeyStore implements KeyStore {
  readonly kind = 'memory' as const
  private readonly apis = new Map<string, ApiRecord>()
  private readonly apiKeyIds = new Map<string, SortedIds>()
  /** `<apiId> <ownerId>` → ids: listKeys by externalId costs the page, as on Redis. */
  private readonly ownerKeyIds = new Map<string, SortedIds>()
  private readonly keysByHash = new Map<string, KeyRecord>()
  private readonly hashById = new Map<string, string>()
  private readonly rootKeys = new MemoryRootKeyStore()
  private readonly entities = new MemoryEntityStore((...change) => this.logChange(...change))
  private readonly namespaceCounters = new MemoryNamespaceCounters()
  /** When each credit-carrying key was last refilled (its balance lives on the record, outside its revision). */
  private readonly refilledAt = new Map<string, number>()
  /** Rate-limit window counters; bounded so old windows cannot pile up in a long-running dev process. */
  private readonly rateWindows = new LRUCache<string, number>({ max: 100_000 })
  private readonly usage = new LRUCache<string, Bucket>({ max: 1_000_000 })
  private readonly audit: AuditEntry[] = []
  private auditSequence = 0
  private readonly revisions: number[] = new Array<number>(SHARD_COUNT).fill(0)
  private readonly logs: ChangeEvent[][] = Array.from({ length: SHARD_COUNT }, () => [])
  private readonly feed: MemoryChangeFeed
  private readonly changeLogMaxLen: number
  /** Memory is lost only with the process, and every verifier with it: one epoch for its lifetime. */
  private readonly epoch = randomBytes(9).toString('base64url')

  constructor(feed: MemoryChangeFeed, options: { changeLogMaxLen?: number } = {}) {
    this.feed = feed
    this.changeLogMaxLen = options.changeLogMaxLen ?? CHANGE_LOG_MAX_LEN
  }

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
    const write = this.write(applyKeyPatch(current, structuredClone(patch), nowMs), 'updated')
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
  ): Promise<Spend | null> {
    const record = this.keysByHash.get(hash)
    if (!record || record.remaining === undefined) return null
    if (refill && (this.refilledAt.get(hash) ?? 0) < refill.boundary) {
      record.remaining = refill.amount
      this.refilledAt.set(hash, nowMs)
    }
    if (record.remaining < cost) return { ok: false, remaining: record.remaining }
    record.remaining -= cost
    return { ok: true, remaining: record.remaining }
  }

  async consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }> {
    const counters = limits.map((l) =>
      counterId({ group, owner: l.owner, name: l.name, duration: l.duration, window: windowStart(l.duration, nowMs) }),
    )
    const used = counters.map((counter) => this.rateWindows.get(counter) ?? 0)
    const failed = limits.findIndex((l, i) => used[i]! + l.cost > l.limit)
    if (failed >= 0) return { failed, used }
    counters.forEach((counter, i) => this.rateWindows.set(counter, used[i]! + limits[i]!.cost))
    return { failed: undefined, used: used.map((u, i) => u + limits[i]!.cost) }
  }

  async addRateLimitUsage(counter: RateCounter, delta: number): Promise<number> {
    const id = counterId(counter)
    const total = (this.rateWindows.get(id) ?? 0) + delta
    this.rateWindows.set(id, total)
    return total
  }

  async addUsage(increments: Iterable<UsageIncrement>): Promise<void> {
    for (const inc of increments) {
      const id = `${inc.keyId} ${inc.granularity} ${inc.time}`
      const bucket = this.usage.get(id) ?? { time: inc.time, success: 0, rateLimited: 0, usageExceeded: 0 }
      for (const [field, n] of Object.entries(inc.counts)) bucket[field as Outcome] += n ?? 0
      this.usage.set(id, bucket)
    }
  }

  async readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]> {
    const buckets: Bucket[] = []
    for (const t of bucketTimes(granularity, from, to)) {
      const bucket = this.usage.get(`${keyId} ${granularity} ${t}`)
      if (bucket) buckets.push({ ...bucket })
    }
    return buckets
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    // Ids sort like stream ids: time, then a sequence number.
    this.auditSequence++
    this.audit.push({ ...structuredClone(entry), id: `${entry.at}-${this.auditSequence}` })
    if (this.audit.length > AUDIT_LOG_MAX_LEN) this.audit.splice(0, this.audit.length - AUDIT_LOG_MAX_LEN)
  }

  async listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]> {
    // Like a stream: everything older than the cursor, whether or not the cursor's own entry is still kept.
    const older = (id: string) => {
      const [at, seq] = id.split('-').map(Number) as [number, number]
      const [cursorAt, cursorSeq] = options.cursor!.split('-').map(Number) as [number, number]
      return at < cursorAt || (at === cursorAt && seq < cursorSeq)
    }
    let end = this.audit.length
    if (options.cursor !== undefined) while (end > 0 && !older(this.audit[end - 1]!.id)) end--
    return this.audit
      .slice(Math.max(0, end - options.limit), end)
      .reverse()
      .map((entry) => structuredClone(entry))
  }

  async updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
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
    return op === 'take' ? before : record.remaining
  }

  // The standalone rate-limit service's windows: memory-namespace-counters.ts.
  consumeNamespaceLimit(
    namespace: string,
    identifier: string,
    limit: number,
    duration: number,
    cost: number,
    nowMs: number,
  ): Promise<{ ok: boolean; used: number }> {
    return this.namespaceCounters.consumeNamespaceLimit(namespace, identifier, limit, duration, cost, nowMs)
  }

  addNamespaceUsage(
    namespace: string,
    identifier: string,
    duration: number,
    window: number,
    delta: number,
  ): Promise<number> {
    return this.namespaceCounters.addNamespaceUsage(namespace, identifier, duration, window, delta)
  }

  // Entities (roles, permissions, identities, rate-limit namespaces and overrides): memory-entity-store.ts.
  getEntity<T>(address: string): Promise<StoredEntity<T> | null> {
    return this.entities.getEntity<T>(address)
  }

  writeEntity(
    address: string,
    id: string,
    kind: 'created' | 'updated' | 'deleted',
    doc: unknown,
    expectedRev?: number,
  ): Promise<EntityWrite | EntityWriteRefused> {
    return this.entities.writeEntity(address, id, kind, doc, expectedRev)
  }

  addToIndex(index: string, member: string): Promise<void> {
    return this.entities.addToIndex(index, member)
  }

  removeFromIndex(index: string, member: string): Promise<void> {
    return this.entities.removeFromIndex(index, member)
  }

  listIndex(index: string, options: { cursor?: string; limit: number }): Promise<IndexPage> {
    return this.entities.listIndex(index, options)
  }

  claimName(scope: string, name: string, value: string): Promise<string | null> {
    return this.entities.claimName(scope, name, value)
  }

  readName(scope: string, name: string): Promise<string | null> {
    return this.entities.readName(scope, name)
  }

  replaceName(scope: string, name: string, from: string, to: string): Promise<boolean> {
    return this.entities.replaceName(scope, name, from, to)
  }

  releaseName(scope: string, name: string, value: string): Promise<void> {
    return this.entities.releaseName(scope, name, value)
  }

  // Root keys: memory-root-key-store.ts.
  createRootKey(record: RootKeyRecord): Promise<boolean> {
    return this.rootKeys.createRootKey(record)
  }

  getRootKeyByHash(hash: string): Promise<RootKeyRecord | null> {
    return this.rootKeys.getRootKeyByHash(hash)
  }

  getRootKeyById(id: string): Promise<RootKeyRecord | null> {
    return this.rootKeys.getRootKeyById(id)
  }

  listRootKeys(): Promise<RootKeyRecord[]> {
    return this.rootKeys.listRootKeys()
  }

  moveLegacyRootKeys(): Promise<void> {
    return this.rootKeys.moveLegacyRootKeys()
  }

  revokeRootKey(id: string): Promise<RootKeyRecord | null> {
    return this.rootKeys.revokeRootKey(id)
  }

  rollRootKey(id: string, next: RootKeyRecord): Promise<RootKeyRecord | null> {
    return this.rootKeys.rollRootKey(id, next)
  }

  touchRootKey(hash: string, atMs: number): Promise<void> {
    return this.rootKeys.touchRootKey(hash, atMs)
  }

  isBootstrapRootKeyDisabled(): Promise<boolean> {
    return this.rootKeys.isBootstrapRootKeyDisabled()
  }

  setBootstrapRootKeyDisabled(disabled: boolean): Promise<void> {
    return this.rootKeys.setBootstrapRootKeyDisabled(disabled)
  }

  async readRevisions(): Promise<RevisionSnapshot> {
    return { instance: this.epoch, shards: this.revisions.map((rev) => ({ rev, epoch: rev === 0 ? '' : this.epoch })) }
  }

  async readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED> {
    const log = this.logs[shard] ?? []
    const oldest = log[0]?.rev ?? (this.revisions[shard] ?? 0) + 1
    if (afterRev + 1 < oldest) return LOG_TRIMMED
    const changes = log
      .filter((event) => event.rev > afterRev)
      .slice(0, limit)
      .map((event) => ({ ...event }))
    return changes.length > 0 && changes[0]!.rev !== afterRev + 1 ? LOG_TRIMMED : changes
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {}

  private indexOf(indexes: Map<string, SortedIds>, name: string): SortedIds {
    let ids = indexes.get(name)
    if (!ids) indexes.set(name, (ids = new SortedIds()))
    return ids
  }

  /** Revision bump, record, log append and publish: one synchronous step, like the Redis script. */
  private write(input: NewKeyRecord, kind: ChangeKind): KeyWrite {
    const event = this.logChange(shardOf(input.hash), kind, input.id, input.hash, input.apiId)
    const record: KeyRecord = { ...structuredClone(input), rev: event.rev }
    if (kind !== 'deleted') this.keysByHash.set(record.hash, record)
    return { record: structuredClone(record), event: { ...event } }
  }

  /** The next revision of the shard, appended to its log and published; the caller stores the record with it. */
  private logChange(shard: number, kind: ChangeKind, id: string, hash: string, apiId: string): ChangeEvent {
    const rev = (this.revisions[shard] = (this.revisions[shard] ?? 0) + 1)
    const event: ChangeEvent = { v: 1, shard, epoch: this.epoch, rev, kind, keyId: id, hash, apiId }
    const log = this.logs[shard]!
    log.push(event)
    if (log.length > this.changeLogMaxLen) log.splice(0, log.length - this.changeLogMaxLen)
    this.feed.publish({ ...event, at: wallMicros() })
    return { ...event }
  }
}

const ownerIndexKey = (apiId: string, ownerId: string) => `${apiId} ${ownerId}`

// As on Redis: the group is part of a counter's identity, and the name (any characters) comes last.
const counterId = ({ group, owner, name, duration, window }: RateCounter) =>
  `${group} ${owner} ${duration} ${window} ${name}`

// Hashes per batch of scanKeyHashes, as a Redis SCAN answers about as many.
const SCAN_BATCH = 1_000
