import type { ReplicationSettings } from '../config/settings.js'
import { randomBytes } from 'node:crypto'
import { setImmediate as yieldToEventLoop } from 'node:timers/promises'
import { Cluster, type Redis } from 'ioredis'
import { CHANGE_LOG_MAX_LEN, type ChangeEvent, type ChangeKind } from '../change-event.js'
import { MAX_CREDITS, type CreditOp, type Spend } from '../credits.js'
import { AUDIT_LOG_MAX_LEN, type AuditEntry, type NewAuditEntry } from '../audit.js'
import {
  ANALYTICS_RETENTION_MS,
  bucketTimes,
  type Bucket,
  type Granularity,
  type Outcome,
  type UsageIncrement,
} from '../analytics.js'
import { windowStart, type CounterOwner, type ExactLimit, type RateCounter } from '../ratelimit.js'
import { StoreUnavailableError, WriteConflictError } from '../errors.js'
import { idTimestamp } from '../ids.js'
import {
  applyKeyPatch,
  type ApiRecord,
  type KeyPatch,
  type KeyRecord,
  type NewKeyRecord,
  type RootKeyRecord,
} from '../records.js'
import { SHARD_COUNT, shardOf } from '../shards.js'
import {
  LOG_TRIMMED,
  type KeyPage,
  type KeyStore,
  type KeyWrite,
  type RevisionSnapshot,
  type ShardRevision,
} from './key-store.js'
import { recordHash, redisKeys } from './redis-keys.js'
import { toStoreError } from './redis-connection.js'
import { RedisRootKeyStore } from './redis-root-key-store.js'
import { RedisEntityStore } from './redis-entity-store.js'
import { RedisNamespaceCounters } from './redis-namespace-counters.js'
import type { StoredEntity } from '../entity.js'
import type { EntityWrite, EntityWriteRefused, IndexPage } from './entity-store.js'
import {
  ADD_USAGE_SCRIPT,
  CONSUME_RATE_LIMITS_SCRIPT,
  SPEND_CREDITS_SCRIPT,
  UPDATE_CREDITS_SCRIPT,
  WRITE_KEY_SCRIPT,
} from './redis-scripts.js'

type WriteReply = [number, string, string?]

/** A single Redis (or one behind Sentinel), or a Redis Cluster: every multi-key step stays in one slot. */
export type RedisClient = Redis | Cluster

interface ScriptedRedis extends Redis {
  writeKey(record: string, revision: string, log: string, ...args: (string | number)[]): Promise<WriteReply>
  spendCredits(record: string, ...args: (string | number)[]): Promise<[number, number]>
  updateCredits(record: string, ...args: (string | number)[]): Promise<number>
  consumeRateLimits(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number[]>
  addUsage(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>
}

// An index entry whose record is missing is a write in flight until it is this old; then it is debris.
const DANGLING_AFTER_MS = 60_000
const SHARDS = Array.from({ length: SHARD_COUNT }, (_, shard) => shard)
// Replies that mean Redis will not run these commands for us (unknown command, not allowed — EXECABORT: a command of
// the transaction was —, a key of another type), as opposed to "not now" (LOADING, a lost connection).
const REFUSED = /^(ERR|NOPERM|WRONGTYPE|EXECABORT)\b/

const position = (rev: string | null | undefined, epoch: string | null | undefined): ShardRevision => ({
  rev: rev ? Number(rev) : 0,
  epoch: epoch ?? '',
})

/** SORT_RO's [shard, rev, epoch, …] as positions by shard; undefined unless each shard is there exactly once. */
function positionsOf(reply: (string | null)[]): ShardRevision[] | undefined {
  if (reply.length !== 3 * SHARD_COUNT) return undefined
  const positions = new Array<ShardRevision | undefined>(SHARD_COUNT).fill(undefined)
  for (let i = 0; i < reply.length; i += 3) {
    const shard = Number(reply[i])
    if (!Number.isInteger(shard) || shard < 0 || shard >= SHARD_COUNT || positions[shard]) return undefined
    positions[shard] = position(reply[i + 1], reply[i + 2])
  }
  return positions as ShardRevision[]
}

// Buckets (a key's hour and day: two per key) whose usage one script call adds on a single Redis, a few commands each
// inside the script: enough to save round trips, few enough that one call holds Redis only briefly.
const USAGE_BUCKETS_PER_CALL = 50
// A flush's calls in flight at once, on one Redis and on a Cluster. Sent all at once, a large flush would hold Redis in
// one stretch: every other client of it (a miss path, another verifier) would wait that long, and a verifier sharing a
// core with Redis would stall with it. One at a time, Redis serves others between calls; the flush takes a round trip
// a call longer, off every request's path. A Cluster's calls are a key's two buckets each, spread over its nodes: 32 at
// once keep a flush of 50,000 keys near a second.
const USAGE_CALLS_IN_FLIGHT = 1
const CLUSTER_USAGE_CALLS_IN_FLIGHT = 32
// Buckets encoded in one turn of the event loop before it is let go (a Cluster call is smaller than this).
const USAGE_BUCKETS_PER_TURN = 200

/** One addUsage script call: its buckets (the script's keys) and, per bucket, its outcome counts. */
interface UsageCall {
  /** Its first bucket's key id (on a Cluster, every bucket's: they share its slot). */
  keyId: string
  buckets: string[]
  args: (string | number)[]
}
// Keys SCAN looks at per call: a few hundred microseconds of Redis each, so the miss path is never held up long.
const SCAN_COUNT = 1_000
// listKeys reads at most this many index slices for one page, so skipped pointers cannot make it unbounded.
const LIST_ROUNDS = 10

/** A key record from its hash's fields (rev, doc, credits); null when there is none. */
function recordOf([rev, doc, credits]: (string | null | undefined)[]): KeyRecord | null {
  if (rev === null || doc === null || rev === undefined || doc === undefined) return null
  // The parsed document is this read's own: completed in place rather than copied.
  const record = JSON.parse(doc) as KeyRecord
  record.rev = Number(rev)
  if (credits !== null && credits !== undefined) record.remaining = Number(credits)
  return record
}

const rethrowAsStoreError = (err: unknown): never => {
  throw toStoreError(err)
}

/** Production KeyStore on Redis (single node, Sentinel or Cluster: every multi-key step stays in one slot). */
export class RedisKeyStore implements KeyStore {
  readonly kind = 'redis' as const
  private readonly redis: ScriptedRedis
  private readonly now: () => number
  private readonly cluster: Cluster | undefined
  private readonly rootKeys: RedisRootKeyStore
  private readonly entities: RedisEntityStore
  private readonly namespaceCounters: RedisNamespaceCounters
  /** Whether shardPositions reads every shard with one SORT_RO (not on a Cluster, nor once Redis refused it). */
  private sortPositions: boolean

  /** Takes over `redis`: close() closes it. */
  /**
   * `waitReplicas`: every write waits until that many replicas have it (WAIT) before it is acknowledged, so
   * an acknowledged write survives a failover; if they do not confirm within `timeoutMs` the write answers
   * 503 (it may or may not survive). 0 (the default) acknowledges on the primary alone.
   */
  constructor(
    redis: RedisClient,
    now: () => number = Date.now,
    private readonly replication: ReplicationSettings = { waitReplicas: 0, timeoutMs: 1_000 },
  ) {
    redis.defineCommand('writeKey', { numberOfKeys: 3, lua: WRITE_KEY_SCRIPT })
    redis.defineCommand('spendCredits', { numberOfKeys: 1, lua: SPEND_CREDITS_SCRIPT })
    redis.defineCommand('updateCredits', { numberOfKeys: 1, lua: UPDATE_CREDITS_SCRIPT })
    // Called with the number of keys first: one call checks several windows.
    redis.defineCommand('consumeRateLimits', { lua: CONSUME_RATE_LIMITS_SCRIPT })
    redis.defineCommand('addUsage', { lua: ADD_USAGE_SCRIPT })
    this.redis = redis as unknown as ScriptedRedis
    this.cluster = redis instanceof Cluster ? redis : undefined
    this.sortPositions = this.cluster === undefined
    this.now = now
    this.rootKeys = new RedisRootKeyStore(redis, () => this.confirmReplicated())
    this.entities = new RedisEntityStore(redis, () => this.confirmReplicated())
    this.namespaceCounters = new RedisNamespaceCounters(redis)
  }

  async createApi(api: ApiRecord): Promise<void> {
    await this.run(() => this.redis.set(redisKeys.api(api.id), JSON.stringify(api)))
  }

  async getApi(apiId: string): Promise<ApiRecord | null> {
    const api = await this.readApi(apiId)
    return api && !api.deleting ? api : null
  }

  async apiExists(apiId: string): Promise<boolean> {
    return (await this.getApi(apiId)) !== null
  }

  async markApiDeleting(apiId: string): Promise<ApiRecord | null> {
    const api = await this.readApi(apiId)
    if (!api) return null
    api.deleting = true
    await this.run(() => this.redis.set(redisKeys.api(apiId), JSON.stringify(api), 'XX'))
    return api
  }

  async apiExistsOrDeleting(apiId: string): Promise<'exists' | 'deleting' | 'absent'> {
    const api = await this.readApi(apiId)
    return !api ? 'absent' : api.deleting ? 'deleting' : 'exists'
  }

  async removeApi(apiId: string): Promise<void> {
    // Owner indexes of the api were emptied key by key; the api's own keys go in one slot.
    await this.run(() => this.redis.del(redisKeys.api(apiId), redisKeys.apiKeys(apiId)))
  }

  async createKey(input: NewKeyRecord): Promise<KeyWrite | false> {
    // Pointers first: a crash after them leaves only an entry that readers skip, never an unlisted key.
    await this.run(async () => {
      await this.redis.set(redisKeys.keyIdIndex(input.id), input.hash)
      const index = this.redis.multi().zadd(redisKeys.apiKeys(input.apiId), 0, input.id)
      if (input.ownerId !== undefined) index.zadd(redisKeys.apiOwnerKeys(input.apiId, input.ownerId), 0, input.id)
      await index.exec()
    })
    const write = await this.write(
      input,
      'created',
      '',
      input.remaining === undefined ? '' : String(input.remaining),
      input.createdAt,
    )
    if (write === 'exists') {
      await this.removeIndexEntries(input.id, input.apiId, input.ownerId)
      return false
    }
    if (write === 'missing' || write === 'conflict') throw new Error(`unexpected reply to create: ${write}`)
    return write
  }

  async getKeyById(keyId: string): Promise<KeyRecord | null> {
    const hash = await this.run(() => this.redis.get(redisKeys.keyIdIndex(keyId)))
    if (hash === null) return null
    const record = await this.getKeyByHash(hash)
    return record && record.id === keyId ? record : null
  }

  getKeyByHash(hash: string): Promise<KeyRecord | null> {
    // A verifier's miss path: one promise on the read, no async frames around it (each is allocated per miss, and
    // under a flood of misses their garbage is most of the collector's work).
    return this.redis.hmget(redisKeys.record(hash), 'rev', 'doc', 'credits').then(recordOf, rethrowAsStoreError)
  }

  async *scanKeyHashes(): AsyncIterable<string[]> {
    // Every master of a Cluster holds some of the shards; SCAN on each (a Cluster client cannot SCAN as one).
    for (const node of this.cluster ? this.cluster.nodes('master') : [this.redis]) {
      let cursor = '0'
      do {
        const [next, keys] = await this.run(() => node.scan(cursor, 'MATCH', redisKeys.records, 'COUNT', SCAN_COUNT))
        cursor = next
        const hashes = keys.map(recordHash).filter((hash) => hash !== undefined)
        if (hashes.length > 0) yield hashes
      } while (cursor !== '0')
    }
  }

  async spendCredits(
    hash: string,
    cost: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
  ): Promise<Spend | null> {
    const [outcome, remaining] = await this.run(() =>
      this.redis.spendCredits(
        redisKeys.record(hash),
        cost,
        refill ? refill.boundary : '',
        refill ? refill.amount : 0,
        nowMs,
      ),
    )
    return outcome === -1 ? null : { ok: outcome === 1, remaining }
  }

  async consumeRateLimits(
    group: CounterOwner,
    limits: readonly ExactLimit[],
    nowMs: number,
  ): Promise<{ failed: number | undefined; used: number[] }> {
    const keys = limits.map((l) =>
      redisKeys.rateWindow(group, l.owner, l.name, l.duration, windowStart(l.duration, nowMs)),
    )
    const args = limits.flatMap((l) => [l.limit, l.cost, l.duration * 2])
    const [failed, ...used] = await this.run(() => this.redis.consumeRateLimits(keys.length, ...keys, ...args))
    return { failed: failed ? failed - 1 : undefined, used }
  }

  async addRateLimitUsage({ group, owner, name, duration, window }: RateCounter, delta: number): Promise<number> {
    const counter = redisKeys.rateWindow(group, owner, name, duration, window)
    const [total] = await this.run(() =>
      Promise.all([this.redis.incrby(counter, delta), this.redis.pexpire(counter, duration * 2)]),
    )
    return total
  }

  async addUsage(increments: Iterable<UsageIncrement>): Promise<void> {
    // On a Cluster a call's buckets must share a slot: a call per key (its buckets are in its id's slot), ended where
    // the next increment is another key's. On one Redis any buckets go together, USAGE_BUCKETS_PER_CALL to a call (not
    // a call per key verified, which a busy verifier's flush would make thousands of). Arguments are pushed straight
    // into each call's lists: a flush covers every key verified in the last seconds, and its garbage is paid for in the
    // verifier's collector.
    //
    // Increments are read only when there is room in the window to send the call they go to (one call in flight on one
    // Redis, CLUSTER_USAGE_CALLS_IN_FLIGHT on a Cluster): the verifier's recorder takes a key's counts when they are
    // read, so none waits for a call of its own. The event loop is let go every USAGE_BUCKETS_PER_TURN buckets besides
    // (on one Redis each call's wait for its reply already does): a verifier flushing thousands of keys in one turn
    // would hold every verification behind it for milliseconds, which shows in the p99.
    // After a failed call nothing more is sent (Redis is likely down: a call after another would each wait out the
    // command timeout) nor read, and the flush fails once the calls in flight settled: increments read into a call not
    // sent are dropped with it — none on one Redis; on a Cluster, the buckets of the key being read (at most its two).
    const window = this.cluster === undefined ? USAGE_CALLS_IN_FLIGHT : CLUSTER_USAGE_CALLS_IN_FLIGHT
    const inFlight = new Set<Promise<void>>()
    let failure: unknown
    const send = (call: UsageCall): void => {
      let reply: Promise<unknown>
      try {
        reply = this.redis.addUsage(call.buckets.length, ...call.buckets, ...call.args)
      } catch (err) {
        // Thrown rather than rejected: mapped like any other failure, once the calls already sent are settled.
        failure ??= err
        return
      }
      const settled: Promise<void> = reply.then(
        () => void inFlight.delete(settled),
        (err: unknown) => {
          failure ??= err
          inFlight.delete(settled)
        },
      )
      inFlight.add(settled)
    }
    let call: UsageCall | undefined
    let inTurn = 0
    const reading = increments[Symbol.iterator]()
    try {
      for (;;) {
        // Room before the next read. On one Redis only a call's first increment waits (its others fit in it); on a
        // Cluster any may be the first of the next key's call, which only reading it shows.
        if (inFlight.size >= window && (call === undefined || this.cluster !== undefined)) {
          // Waiting for a reply is itself a turn let go: other work runs until it comes.
          inTurn = 0
          while (inFlight.size >= window && failure === undefined) await Promise.race(inFlight)
        }
        // Checked before the next is read: an increment read after a failure would be taken only to be dropped.
        if (failure !== undefined) break
        const next = reading.next()
        if (next.done === true) break
        const inc = next.value
        if (this.cluster !== undefined && call !== undefined && call.keyId !== inc.keyId) {
          // Another key: the call so far is complete, and there is room for it (made before this read).
          send(call)
          call = undefined
        }
        call ??= { keyId: inc.keyId, buckets: [], args: [ANALYTICS_RETENTION_MS] }
        call.buckets.push(redisKeys.usage(inc.keyId, inc.granularity, inc.time))
        const at = call.args.push(0) - 1
        let outcomes = 0
        for (const outcome in inc.counts) {
          call.args.push(outcome, inc.counts[outcome as Outcome] ?? 0)
          outcomes++
        }
        call.args[at] = outcomes
        if (this.cluster === undefined && call.buckets.length === USAGE_BUCKETS_PER_CALL) {
          send(call)
          call = undefined
        }
        if (++inTurn === USAGE_BUCKETS_PER_TURN) {
          inTurn = 0
          await yieldToEventLoop()
        }
      }
    } finally {
      // Read no further: an iterable that holds something until it is read to the end (a generator's finally) lets go.
      reading.return?.()
    }
    if (call !== undefined && failure === undefined) {
      // The last call: room for it, as for any other, before it is sent.
      while (inFlight.size >= window && failure === undefined) await Promise.race(inFlight)
      if (failure === undefined) send(call)
    }
    await Promise.all(inFlight)
    if (failure !== undefined) throw toStoreError(failure)
  }

  async readUsage(keyId: string, granularity: Granularity, from: number, to: number): Promise<Bucket[]> {
    const times = bucketTimes(granularity, from, to)
    const rows = await this.run(() =>
      Promise.all(times.map((t) => this.redis.hgetall(redisKeys.usage(keyId, granularity, t)))),
    )
    return times.flatMap((time, i) => {
      const row = rows[i]!
      if (Object.keys(row).length === 0) return []
      return [
        {
          time,
          success: Number(row.success ?? 0),
          rateLimited: Number(row.rateLimited ?? 0),
          usageExceeded: Number(row.usageExceeded ?? 0),
        },
      ]
    })
  }

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await this.run(() =>
      this.redis.xadd(redisKeys.auditLog, 'MAXLEN', '~', AUDIT_LOG_MAX_LEN, '*', 'entry', JSON.stringify(entry)),
    )
  }

  async listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]> {
    // Nothing is older than 0-0, and Redis refuses the exclusive '(0-0' (no id comes before it to start from).
    if (options.cursor !== undefined && /^0+-0+$/.test(options.cursor)) return []
    const entries = await this.run(() =>
      this.redis.xrevrange(
        redisKeys.auditLog,
        options.cursor === undefined ? '+' : `(${options.cursor}`,
        '-',
        'COUNT',
        options.limit,
      ),
    )
    return entries.map(([id, fields]) => ({ id, ...(JSON.parse(fields[1] ?? '{}') as NewAuditEntry) }))
  }

  async updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
  ): Promise<number | null> {
    const hash = await this.run(() => this.redis.get(redisKeys.keyIdIndex(keyId)))
    if (hash === null) return null
    const balance = await this.run(() =>
      this.redis.updateCredits(
        redisKeys.record(hash),
        op,
        value,
        refill ? refill.boundary : '',
        refill ? refill.amount : 0,
        nowMs,
        MAX_CREDITS,
      ),
    )
    return balance === -1 ? null : balance
  }

  async updateKey(keyId: string, patch: KeyPatch, expectedRev: number, nowMs: number): Promise<KeyWrite | null> {
    const current = await this.getKeyById(keyId)
    if (!current) return null
    if (current.rev !== expectedRev) throw new WriteConflictError()
    const next = applyKeyPatch(current, patch, nowMs)
    const ownerChanged = next.ownerId !== current.ownerId
    // New owner pointer before the record, old one after: a crash in between leaves an extra pointer that
    // readers filter out by the record's ownerId, never a key missing from its owner's list.
    if (ownerChanged && next.ownerId !== undefined) {
      await this.run(() => this.redis.zadd(redisKeys.apiOwnerKeys(next.apiId, next.ownerId!), 0, keyId))
    }
    const credits =
      patch.remaining === null
        ? 'del'
        : patch.remaining !== undefined
          ? String(patch.remaining)
          : patch.refill
            ? 'stamp'
            : ''
    const write = await this.write(next, 'updated', String(expectedRev), credits, nowMs)
    if (write === 'missing') return null
    if (write === 'conflict') throw new WriteConflictError()
    if (write === 'exists') throw new Error('unexpected reply to update: exists')
    if (ownerChanged && current.ownerId !== undefined) {
      await this.run(() => this.redis.zrem(redisKeys.apiOwnerKeys(current.apiId, current.ownerId!), keyId))
    }
    return write
  }

  async deleteKey(keyId: string): Promise<KeyWrite | null> {
    const current = await this.getKeyById(keyId)
    if (!current) return null
    const { rev: _rev, ...rest } = current
    const write = await this.write(rest, 'deleted', '', '', this.now())
    if (write === 'missing') return null
    if (write === 'exists' || write === 'conflict') throw new Error(`unexpected reply to delete: ${write}`)
    await this.removeIndexEntries(keyId, current.apiId, current.ownerId)
    return write
  }

  async listKeys(apiId: string, options: { cursor?: string; limit: number; ownerId?: string }): Promise<KeyPage> {
    const index =
      options.ownerId === undefined ? redisKeys.apiKeys(apiId) : redisKeys.apiOwnerKeys(apiId, options.ownerId)
    const keys: KeyRecord[] = []
    let cursor = options.cursor
    let total = 0
    // Usually one round; more only when pointers are skipped (a crash between pointer and record).
    for (let round = 0; round < LIST_ROUNDS; round++) {
      const want = options.limit - keys.length
      const [ids, count] = await this.run(() =>
        Promise.all([
          this.redis.zrangebylex(index, cursor === undefined ? '-' : `(${cursor}`, '+', 'LIMIT', 0, want),
          this.redis.zcard(redisKeys.apiKeys(apiId)),
        ]),
      )
      total = count
      const records = await Promise.all(ids.map((id) => this.getKeyById(id)))
      ids.forEach((id, i) => {
        const record = records[i]
        if (record && record.apiId === apiId && (options.ownerId === undefined || record.ownerId === options.ownerId)) {
          keys.push(record)
        } else {
          void this.cleanUpPointer(index, id, record ?? null).catch(() => {})
        }
      })
      if (ids.length < want) return { keys, total }
      cursor = ids[ids.length - 1]
      if (keys.length === options.limit) break
    }
    // Full page, or a scan cut short by many skipped pointers: either way the index may hold more.
    return { keys, total, cursor }
  }

  // The standalone rate-limit service's windows: redis-namespace-counters.ts.
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

  // Entities (roles, permissions, identities, rate-limit namespaces and overrides): redis-entity-store.ts.
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

  // Root keys: redis-root-key-store.ts.
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
    // The server's identity and every shard's position; auto-pipelining sends them in one round trip.
    const [instance, shards] = await this.run(() => Promise.all([this.instanceId(), this.shardPositions()]))
    return { instance, shards }
  }

  /**
   * Every shard's {rev, epoch}. On a single Redis one SORT_RO reads them all (a verifier confirms its cache with this
   * every second, and before each batch of unknown keys it answers without reading them: 64 commands a time would cost
   * Redis more than the key reads saved). Shard by shard on a Cluster, or if Redis refuses SORT_RO.
   */
  private async shardPositions(): Promise<ShardRevision[]> {
    if (this.sortPositions) {
      try {
        const reply = (await this.redis.call(
          'SORT_RO',
          redisKeys.shardNumbers,
          'BY',
          'nosort',
          'GET',
          '#',
          'GET',
          `${redisKeys.revisionPattern}->rev`,
          'GET',
          `${redisKeys.revisionPattern}->epoch`,
        )) as (string | null)[]
        const positions = positionsOf(reply)
        if (positions) return positions
        // Missing (a new or emptied Redis) or altered: written afresh, and read shard by shard this once.
        await this.redis
          .multi()
          .del(redisKeys.shardNumbers)
          .sadd(redisKeys.shardNumbers, ...SHARDS)
          .exec()
      } catch (err) {
        // Refused for good (before Redis 7, an ACL without SORT_RO or writes): shard by shard from now on.
        if (!(err instanceof Error && err.name === 'ReplyError' && REFUSED.test(err.message))) throw err
        this.sortPositions = false
      }
    }
    const values = await Promise.all(SHARDS.map((shard) => this.redis.hmget(redisKeys.revision(shard), 'rev', 'epoch')))
    return values.map(([rev, epoch]) => position(rev, epoch))
  }

  async readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED> {
    const log = redisKeys.changeLog(shard)
    const [oldest, entries, [revision, epoch]] = await this.run(() =>
      Promise.all([
        this.redis.xrange(log, '-', '+', 'COUNT', 1),
        this.redis.xrange(log, `${afterRev + 1}-0`, '+', 'COUNT', limit),
        this.redis.hmget(redisKeys.revision(shard), 'rev', 'epoch'),
      ]),
    )
    const oldestRev = oldest[0] ? parseInt(oldest[0][0], 10) : Number(revision ?? 0) + 1
    if (afterRev + 1 < oldestRev) return LOG_TRIMMED
    // The two reads are not atomic: a trim in between shows up as a gap at the start.
    if (entries[0] && parseInt(entries[0][0], 10) !== afterRev + 1) return LOG_TRIMMED
    return entries.map(([id, fields]) => {
      const field = (name: string) => fields[fields.indexOf(name) + 1] ?? ''
      return {
        v: 1,
        shard,
        epoch: epoch ?? '',
        rev: parseInt(id, 10),
        kind: field('kind') as ChangeKind,
        keyId: field('keyId'),
        hash: field('hash'),
        apiId: field('apiId'),
      }
    })
  }

  private async confirmReplicated(): Promise<void> {
    const { waitReplicas, timeoutMs } = this.replication
    if (waitReplicas === 0) return
    const confirmed = Number(await this.run(() => this.redis.call('WAIT', waitReplicas, timeoutMs)))
    if (confirmed < waitReplicas) {
      throw new StoreUnavailableError(
        `the write reached ${confirmed} of ${waitReplicas} replicas in ${timeoutMs} ms; its outcome is unknown, retry`,
      )
    }
  }

  /** run_id of the server, or of every master of a Cluster (any of them restarting or failing over changes it). */
  private async instanceId(): Promise<string> {
    const runId = (info: string) => /run_id:(\w+)/.exec(info)?.[1] ?? ''
    if (!this.cluster) return runId(await this.redis.info('server'))
    const masters = this.cluster.nodes('master')
    const ids = await Promise.all(
      masters.map(async (node) => `${node.options.host}:${node.options.port}=${runId(await node.info('server'))}`),
    )
    return ids.sort().join(',')
  }

  async ping(): Promise<void> {
    await this.run(() => this.redis.ping())
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect())
  }

  private async readApi(apiId: string): Promise<ApiRecord | null> {
    const doc = await this.run(() => this.redis.get(redisKeys.api(apiId)))
    return doc === null ? null : (JSON.parse(doc) as ApiRecord)
  }

  /** `credits`: '' leaves the balance, 'del' removes it, a number sets it. The document never holds it. */
  private async write(
    input: NewKeyRecord,
    kind: ChangeKind,
    expectedRev: string,
    credits: string,
    nowMs: number,
  ): Promise<KeyWrite | 'exists' | 'missing' | 'conflict'> {
    const shard = shardOf(input.hash)
    const { remaining: _balance, ...doc } = input
    const [rev, outcome, epoch] = await this.run(() =>
      this.redis.writeKey(
        redisKeys.record(input.hash),
        redisKeys.revision(shard),
        redisKeys.changeLog(shard),
        kind,
        expectedRev,
        JSON.stringify(doc),
        input.id,
        input.hash,
        input.apiId,
        CHANGE_LOG_MAX_LEN,
        // A fresh epoch candidate on every call: a counter re-created after data loss always gets a new epoch.
        redisKeys.changesChannel,
        shard,
        randomBytes(9).toString('base64url'),
        credits,
        nowMs,
      ),
    )
    if (rev === 0) return outcome as 'exists' | 'missing' | 'conflict'
    await this.confirmReplicated()
    const event: ChangeEvent = {
      v: 1,
      shard,
      epoch: epoch ?? '',
      rev,
      kind,
      keyId: input.id,
      hash: input.hash,
      apiId: input.apiId,
    }
    return { record: { ...input, rev }, event, ...(outcome === 'publish-failed' ? { publishFailed: true } : {}) }
  }

  private async removeIndexEntries(keyId: string, apiId: string, ownerId: string | undefined): Promise<void> {
    await this.run(async () => {
      const index = this.redis.multi().zrem(redisKeys.apiKeys(apiId), keyId)
      if (ownerId !== undefined) index.zrem(redisKeys.apiOwnerKeys(apiId, ownerId), keyId)
      await index.exec()
      await this.redis.del(redisKeys.keyIdIndex(keyId))
    })
  }

  /** Drops a pointer whose record is gone or moved, once it is too old to be a write in flight. */
  private async cleanUpPointer(index: string, keyId: string, record: KeyRecord | null): Promise<void> {
    const writtenAt = record ? (record.updatedAt ?? record.createdAt) : idTimestamp(keyId)
    if (writtenAt === undefined || this.now() - writtenAt < DANGLING_AFTER_MS) return
    await this.redis.zrem(index, keyId)
    if (!record) await this.redis.del(redisKeys.keyIdIndex(keyId))
  }

  private async run<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation()
    } catch (err) {
      throw toStoreError(err)
    }
  }
}
