import { Cluster } from 'ioredis'
import type { ChangeEvent, ChangeKind } from '../../change-event.js'
import type { CreditNoticeEntry, CreditNoticeKind } from '../../keys/credit-notice.js'
import { SHARD_COUNT } from '../../shards.js'
import { LOG_TRIMMED, type ChangeLogStore, type RevisionSnapshot, type ShardRevision } from './change-log-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'

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

/**
 * The shards' revisions and change logs on Redis: each shard's revision counter a HASH {rev, epoch} and its log a
 * capped STREAM (entry id = revision), both in the shard's slot, written by the write script of keys and entities.
 */
export class RedisChangeLogStore implements ChangeLogStore {
  private readonly cluster: Cluster | undefined
  /** Whether shardPositions reads every shard with one SORT_RO (not on a Cluster, nor once Redis refused it). */
  private sortPositions: boolean

  constructor(private readonly redis: RedisClient) {
    this.cluster = redis instanceof Cluster ? redis : undefined
    this.sortPositions = this.cluster === undefined
  }

  async readRevisions(): Promise<RevisionSnapshot> {
    // The server's identity and every shard's position; auto-pipelining sends them in one round trip.
    const [instance, shards] = await storeCall(() => Promise.all([this.instanceId(), this.shardPositions()]))
    return { instance, shards }
  }

  async readRevision(shard: number): Promise<ShardRevision> {
    const [rev, epoch] = await storeCall(() => this.redis.hmget(redisKeys.revision(shard), 'rev', 'epoch'))
    return position(rev, epoch)
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
    const [oldest, entries, [revision, epoch]] = await storeCall(() =>
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
      const changed = fields.includes('fields') ? field('fields').split(',') : undefined
      return {
        v: 1,
        shard,
        epoch: epoch ?? '',
        rev: parseInt(id, 10),
        kind: field('kind') as ChangeKind,
        keyId: field('keyId'),
        hash: field('hash'),
        apiId: field('apiId'),
        ...(changed ? { fields: changed } : {}),
      }
    })
  }

  async readCreditNotices(
    shard: number,
    afterId: string,
    limit: number,
  ): Promise<CreditNoticeEntry[] | typeof LOG_TRIMMED> {
    const log = redisKeys.creditNotices(shard)
    // One read (the deriver reads every shard's notices, idle or not), from the notice the reader stopped at on: that
    // it is still there says no trim passed it.
    const read = await storeCall(() =>
      this.redis.xrange(log, afterId === '' ? '-' : afterId, '+', 'COUNT', afterId === '' ? limit : limit + 1),
    )
    // The notice the reader stopped at is gone, and maybe more after it: a trim passed it.
    if (afterId !== '' && read[0] && compareStreamIds(read[0][0], afterId) > 0) return LOG_TRIMMED
    // Else the read starts with that notice (or is empty: nothing logged since, or at all).
    const entries = afterId === '' ? read : read.slice(1)
    return entries.map(([id, fields]) => {
      const field = (name: string) => fields[fields.indexOf(name) + 1] ?? ''
      const threshold = fields.includes('threshold') ? Number(field('threshold')) : undefined
      return {
        id,
        kind: field('kind') as CreditNoticeKind,
        keyId: field('keyId'),
        apiId: field('apiId'),
        remaining: Number(field('remaining')),
        ...(threshold !== undefined ? { threshold } : {}),
      }
    })
  }

  async lastCreditNoticeIds(): Promise<string[]> {
    const last = await storeCall(() =>
      Promise.all(SHARDS.map((shard) => this.redis.xrevrange(redisKeys.creditNotices(shard), '+', '-', 'COUNT', 1))),
    )
    return last.map((entries) => entries[0]?.[0] ?? '')
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
}

/** Orders stream ids (`<ms>-<seq>`). */
function compareStreamIds(a: string, b: string): number {
  const [aMs, aSeq] = a.split('-').map(Number) as [number, number]
  const [bMs, bSeq] = b.split('-').map(Number) as [number, number]
  return aMs - bMs || aSeq - bSeq
}
