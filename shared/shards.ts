/**
 * Records, revision counters and change logs are split into a fixed number of shards chosen from the key's
 * SHA-256, each under its own Redis hash tag, so that every write touches one hash slot on a Redis Cluster
 * as on a single Redis. Changing SHARD_COUNT re-homes every record: it is part of the storage format.
 */
export const SHARD_COUNT = 64

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const VALUE = new Int16Array(128).fill(-1)
for (let i = 0; i < BASE64.length; i++) VALUE[BASE64.charCodeAt(i)] = i

/** The shard of a key hash (standard base64 SHA-256): its first 12 bits modulo SHARD_COUNT. */
export function shardOf(hash: string): number {
  const high = VALUE[hash.charCodeAt(0)] ?? 0
  const low = VALUE[hash.charCodeAt(1)] ?? 0
  return ((high << 6) | low) % SHARD_COUNT
}
