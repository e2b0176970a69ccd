import { shardOf } from '../shards.js'

/**
 * Every Redis key and channel name Keygate uses. Anything a script touches together shares one hash tag,
 * so the same code runs on a single Redis and on a Redis Cluster.
 */
const shardTag = (shard: number) => `{s${shard}}`

export const redisKeys = {
  /** HASH {rev, doc}: the key record, in its shard's slot. */
  record: (hash: string) => `kg:${shardTag(shardOf(hash))}:k:${hash}`,
  /** HASH {rev, epoch}: the shard's revision counter and the identity of its sequence. */
  revision: (shard: number) => `kg:${shardTag(shard)}:rev`,
  /** STREAM of changes, entry id `<rev>-1`, capped. */
  changeLog: (shard: number) => `kg:${shardTag(shard)}:log`,
  /** STRING counter: one rate-limit window of a key, in the key's slot, expiring after the window. */
  rateWindow: (hash: string, name: string, duration: number, window: number) =>
    `kg:${shardTag(shardOf(hash))}:rl:${hash}:${name}:${duration}:${window}`,
  /** HASH {success, rateLimited, usageExceeded}: one analytics bucket of a key, in the key id's slot. */
  usage: (keyId: string, granularity: string, time: number) => `kg:usage:{${keyId}}:${granularity}:${time}`,
  /** STREAM of audit entries (field `entry`: JSON), capped. */
  auditLog: 'kg:{audit}:log',
  /** STRING hash: keyId → record pointer (own slot; never decides a verdict). */
  keyIdIndex: (keyId: string) => `kg:kid:${keyId}`,
  /** STRING json: the api record. */
  api: (apiId: string) => `kg:api:{${apiId}}`,
  /** ZSET of key ids (score 0, ordered by id) in the api's slot. */
  apiKeys: (apiId: string) => `kg:api:{${apiId}}:keys`,
  /** ZSET of key ids of one owner (externalId) in the api's slot. */
  apiOwnerKeys: (apiId: string, ownerId: string) => `kg:api:{${apiId}}:owner:${ownerId}`,
  /** STRING json: a root key record by hash. */
  rootKey: (hash: string) => `kg:root:${hash}`,
  /** Pub/sub channel of change events. */
  changesChannel: 'kg:changes',
} as const
