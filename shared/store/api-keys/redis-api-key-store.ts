import { changedKeyFields } from '../../keys/key-changes.js'
import { CREDIT_NOTICES_MAX_LEN, type CreditNotice } from '../../keys/credit-notice.js'
import { randomBytes } from 'node:crypto'
import { Cluster, type Redis } from 'ioredis'
import { CHANGE_LOG_MAX_LEN, type ChangeEvent, type ChangeKind } from '../../change-event.js'
import { MAX_CREDITS, type CreditOp, type Spend } from '../../keys/credits.js'
import { WriteConflictError } from '../../errors/errors.js'
import { idTimestamp } from '../../ids.js'
import { applyKeyPatch, type ApiRecord, type KeyPatch, type KeyRecord, type NewKeyRecord } from '../../keys/records.js'
import { shardOf } from '../../shards.js'
import type { ApiKeyStore, KeyPage, KeyWrite } from './api-key-store.js'
import { toStoreError, type RedisClient } from '../redis/redis-connection.js'
import { recordHash, redisKeys } from '../redis/redis-keys.js'
import type { AfterWrite } from '../redis/redis-replica-wait.js'
import { SPEND_CREDITS_SCRIPT, UPDATE_CREDITS_SCRIPT, WRITE_KEY_SCRIPT } from '../redis/redis-scripts.js'
import { storeCall } from '../redis/redis-store-call.js'
import type { IdentityIdOf } from '../change-snapshots/change-snapshot-store.js'

type WriteReply = [number, string, string?]

interface KeyScripts {
  writeKey(
    record: string,
    revision: string,
    log: string,
    snapshots: string,
    ...args: (string | number)[]
  ): Promise<WriteReply>
  spendCredits(record: string, notices: string, ...args: (string | number)[]): Promise<[number, number]>
  updateCredits(record: string, notices: string, ...args: (string | number)[]): Promise<number>
}

// An index entry whose record is missing is a write in flight until it is this old; then it is debris.
const DANGLING_AFTER_MS = 60_000
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

/** The credit scripts' notice arguments: key id ('' = no notice), api id, threshold ('' = none), the log's cap. */
function noticeArgs(notice: CreditNotice | undefined, shard: number): (string | number)[] {
  const where = [CREDIT_NOTICES_MAX_LEN, redisKeys.changesChannel, shard]
  if (!notice) return ['', '', '', ...where]
  return [notice.keyId, notice.apiId, notice.lowThreshold ?? '', ...where]
}

const rethrowAsStoreError = (err: unknown): never => {
  throw toStoreError(err)
}

/**
 * Apis, keys and credits on Redis (single node, Sentinel or Cluster: every multi-key step stays in one slot): each key
 * a HASH {rev, doc, credits} in its shard's slot, written by the one write script (redis-scripts.ts).
 */
export class RedisApiKeyStore implements ApiKeyStore {
  private readonly redis: Redis & KeyScripts
  private readonly cluster: Cluster | undefined

  /**
   * `afterWrite` runs after every write that changed something (the store's replica confirmation); `identityIdOf`
   * names a key's identity in the snapshot of its write.
   */
  constructor(
    redis: RedisClient,
    private readonly afterWrite: AfterWrite,
    private readonly identityIdOf: IdentityIdOf,
    private readonly now: () => number = Date.now,
  ) {
    redis.defineCommand('writeKey', { numberOfKeys: 4, lua: WRITE_KEY_SCRIPT })
    redis.defineCommand('spendCredits', { numberOfKeys: 2, lua: SPEND_CREDITS_SCRIPT })
    redis.defineCommand('updateCredits', { numberOfKeys: 2, lua: UPDATE_CREDITS_SCRIPT })
    this.redis = redis as unknown as Redis & KeyScripts
    this.cluster = redis instanceof Cluster ? redis : undefined
  }

  async createApi(api: ApiRecord): Promise<void> {
    await storeCall(() => this.redis.set(redisKeys.api(api.id), JSON.stringify(api)))
    await this.afterWrite()
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
    await storeCall(() => this.redis.set(redisKeys.api(apiId), JSON.stringify(api), 'XX'))
    return api
  }

  async apiExistsOrDeleting(apiId: string): Promise<'exists' | 'deleting' | 'absent'> {
    const api = await this.readApi(apiId)
    return !api ? 'absent' : api.deleting ? 'deleting' : 'exists'
  }

  async removeApi(apiId: string): Promise<void> {
    // Owner indexes of the api were emptied key by key; the api's own keys go in one slot.
    await storeCall(() => this.redis.del(redisKeys.api(apiId), redisKeys.apiKeys(apiId)))
  }

  async createKey(input: NewKeyRecord): Promise<KeyWrite | false> {
    // Pointers first: a crash after them leaves only an entry that readers skip, never an unlisted key.
    await storeCall(async () => {
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
    const hash = await storeCall(() => this.redis.get(redisKeys.keyIdIndex(keyId)))
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
        const [next, keys] = await storeCall(() => node.scan(cursor, 'MATCH', redisKeys.records, 'COUNT', SCAN_COUNT))
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
    notice?: CreditNotice,
  ): Promise<Spend | null> {
    const [outcome, remaining] = await storeCall(() =>
      this.redis.spendCredits(
        redisKeys.record(hash),
        redisKeys.creditNotices(shardOf(hash)),
        cost,
        refill ? refill.boundary : '',
        refill ? refill.amount : 0,
        nowMs,
        ...noticeArgs(notice, shardOf(hash)),
      ),
    )
    return outcome === -1 ? null : { ok: outcome === 1, remaining }
  }

  async updateCredits(
    keyId: string,
    op: CreditOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    nowMs: number,
    notice?: CreditNotice,
  ): Promise<number | null> {
    const hash = await storeCall(() => this.redis.get(redisKeys.keyIdIndex(keyId)))
    if (hash === null) return null
    const balance = await storeCall(() =>
      this.redis.updateCredits(
        redisKeys.record(hash),
        redisKeys.creditNotices(shardOf(hash)),
        op,
        value,
        refill ? refill.boundary : '',
        refill ? refill.amount : 0,
        nowMs,
        MAX_CREDITS,
        ...noticeArgs(notice, shardOf(hash)),
      ),
    )
    if (balance === -1) return null
    // A balance set to 0 cuts a key off as a disable does: acknowledged, it must survive a failover too.
    await this.afterWrite()
    return balance
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
      await storeCall(() => this.redis.zadd(redisKeys.apiOwnerKeys(next.apiId, next.ownerId!), 0, keyId))
    }
    const credits =
      patch.remaining === null
        ? 'del'
        : patch.remaining !== undefined
          ? String(patch.remaining)
          : patch.refill
            ? 'stamp'
            : ''
    const write = await this.write(
      next,
      'updated',
      String(expectedRev),
      credits,
      nowMs,
      changedKeyFields(current, next),
    )
    if (write === 'missing') return null
    if (write === 'conflict') throw new WriteConflictError()
    if (write === 'exists') throw new Error('unexpected reply to update: exists')
    if (ownerChanged && current.ownerId !== undefined) {
      await storeCall(() => this.redis.zrem(redisKeys.apiOwnerKeys(current.apiId, current.ownerId!), keyId))
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
      const [ids, count] = await storeCall(() =>
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

  private async readApi(apiId: string): Promise<ApiRecord | null> {
    const doc = await storeCall(() => this.redis.get(redisKeys.api(apiId)))
    return doc === null ? null : (JSON.parse(doc) as ApiRecord)
  }

  /** `credits`: '' leaves the balance, 'del' removes it, a number sets it. The document never holds it. */
  private async write(
    input: NewKeyRecord,
    kind: ChangeKind,
    expectedRev: string,
    credits: string,
    nowMs: number,
    fields: string[] = [],
  ): Promise<KeyWrite | 'exists' | 'missing' | 'conflict'> {
    const shard = shardOf(input.hash)
    const { remaining: _balance, ...doc } = input
    const identityId = input.ownerId === undefined ? undefined : await this.identityIdOf(input.ownerId)
    const [rev, outcome, epoch] = await storeCall(() =>
      this.redis.writeKey(
        redisKeys.record(input.hash),
        redisKeys.revision(shard),
        redisKeys.changeLog(shard),
        redisKeys.changeSnapshots(shard),
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
        fields.join(','),
        '1',
        identityId ?? '',
      ),
    )
    if (rev === 0) return outcome as 'exists' | 'missing' | 'conflict'
    await this.afterWrite()
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
    await storeCall(async () => {
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
}
