import { randomBytes } from 'node:crypto'
import type { Cluster, Redis } from 'ioredis'
import { CHANGE_LOG_MAX_LEN, type ChangeEvent } from '../../change-event.js'
import { entityShard, type StoredEntity } from '../../entity.js'
import { redisKeys } from '../redis/redis-keys.js'
import type { AfterWrite } from '../redis/redis-replica-wait.js'
import { storeCall } from '../redis/redis-store-call.js'
import { snapshotKept } from '../change-snapshots/change-snapshot-store.js'
import { WRITE_KEY_SCRIPT } from '../redis/redis-scripts.js'
import type { EntityStore, EntityWrite, EntityWriteRefused, IndexPage } from './entity-store.js'

type WriteReply = [number, string, string?]

interface EntityScripts {
  writeEntity(
    record: string,
    revision: string,
    log: string,
    snapshots: string,
    ...args: (string | number)[]
  ): Promise<WriteReply>
  replaceName(name: string, from: string, to: string): Promise<number>
  releaseName(name: string, value: string): Promise<number>
}

// Compare-and-set on one string: a name moves (or goes) only if it still points where the caller saw it.
const REPLACE_NAME_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1
`
const RELEASE_NAME_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1
`

/**
 * Entities on Redis: each record a HASH {rev, doc} in its shard's slot, written by the keys' own write script
 * (the event's `hash` is the entity's address, its `keyId` the entity's id), so revision bump, record, log and
 * publish are one step on a single Redis and on a Cluster alike. Indexes and names are one key each.
 */
export class RedisEntityStore implements EntityStore {
  private readonly redis: Redis & EntityScripts

  /** `afterWrite` runs after every write that changed something (the store's replica confirmation). */
  constructor(
    redis: Redis | Cluster,
    private readonly afterWrite: AfterWrite,
  ) {
    redis.defineCommand('writeEntity', { numberOfKeys: 4, lua: WRITE_KEY_SCRIPT })
    redis.defineCommand('replaceName', { numberOfKeys: 1, lua: REPLACE_NAME_SCRIPT })
    redis.defineCommand('releaseName', { numberOfKeys: 1, lua: RELEASE_NAME_SCRIPT })
    this.redis = redis as unknown as Redis & EntityScripts
  }

  async getEntity<T>(address: string): Promise<StoredEntity<T> | null> {
    const [rev, doc] = await storeCall(() => this.redis.hmget(redisKeys.entity(address), 'rev', 'doc'))
    if (rev === null || doc === null || rev === undefined || doc === undefined) return null
    return { doc: JSON.parse(doc) as T, rev: Number(rev) }
  }

  async writeEntity(
    address: string,
    id: string,
    kind: 'created' | 'updated' | 'deleted',
    doc: unknown,
    expectedRev?: number,
  ): Promise<EntityWrite | EntityWriteRefused> {
    const shard = entityShard(address)
    const [rev, outcome, epoch] = await storeCall(() =>
      this.redis.writeEntity(
        redisKeys.entity(address),
        redisKeys.revision(shard),
        redisKeys.changeLog(shard),
        redisKeys.changeSnapshots(shard),
        kind,
        expectedRev === undefined ? '' : String(expectedRev),
        kind === 'deleted' ? '' : JSON.stringify(doc),
        id,
        address,
        '',
        CHANGE_LOG_MAX_LEN,
        redisKeys.changesChannel,
        shard,
        // A fresh epoch candidate on every call: a counter re-created after data loss always gets a new epoch.
        randomBytes(9).toString('base64url'),
        '',
        Date.now(),
        '',
        snapshotKept(address) ? '1' : '',
      ),
    )
    if (rev === 0) return outcome as EntityWriteRefused
    await this.afterWrite()
    const event: ChangeEvent = { v: 1, shard, epoch: epoch ?? '', rev, kind, keyId: id, hash: address, apiId: '' }
    return { rev, event, ...(outcome === 'publish-failed' ? { publishFailed: true } : {}) }
  }

  async addToIndex(index: string, member: string): Promise<void> {
    await storeCall(() => this.redis.zadd(redisKeys.entityIndex(index), 0, member))
  }

  async removeFromIndex(index: string, member: string): Promise<void> {
    await storeCall(() => this.redis.zrem(redisKeys.entityIndex(index), member))
  }

  async listIndex(index: string, options: { cursor?: string; limit: number }): Promise<IndexPage> {
    const key = redisKeys.entityIndex(index)
    const [members, total] = await storeCall(() =>
      Promise.all([
        this.redis.zrangebylex(
          key,
          options.cursor === undefined ? '-' : `(${options.cursor}`,
          '+',
          'LIMIT',
          0,
          options.limit,
        ),
        this.redis.zcard(key),
      ]),
    )
    return members.length === options.limit
      ? { members, total, cursor: members[members.length - 1]! }
      : { members, total }
  }

  async claimName(scope: string, name: string, value: string): Promise<string | null> {
    const key = redisKeys.entityName(scope, name)
    // SET NX GET (Redis 7): claims the name, or answers who holds it, in one step.
    const held = await storeCall(() => this.redis.set(key, value, 'NX', 'GET'))
    return held ?? null
  }

  async readName(scope: string, name: string): Promise<string | null> {
    return storeCall(() => this.redis.get(redisKeys.entityName(scope, name)))
  }

  async replaceName(scope: string, name: string, from: string, to: string): Promise<boolean> {
    return (await storeCall(() => this.redis.replaceName(redisKeys.entityName(scope, name), from, to))) === 1
  }

  async releaseName(scope: string, name: string, value: string): Promise<void> {
    await storeCall(() => this.redis.releaseName(redisKeys.entityName(scope, name), value))
  }
}
