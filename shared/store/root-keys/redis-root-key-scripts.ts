/**
 * Root-key writes, each one atomic step in the `{root}` slot (redis-keys.ts): a revoke or a roll is all done or
 * not at all, on a single Redis and on a Cluster alike.
 *
 * KEYS of every script: root keys (hash → json), ids (id → hash), last uses (hash → ms), revoked hashes (set).
 * Revoked hashes are remembered (44 bytes each) only so that a legacy copy of a revoked root key cannot return.
 */

/**
 * ARGV: hash, id, record json. Returns 1 created, 0 the hash or id is taken, -1 the hash was revoked (a legacy
 * copy of a revoked root key, met again, must not come back; a new random key is never in that set).
 */
export const CREATE_ROOT_KEY_SCRIPT = `
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 then return -1 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[2]) == 1 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
return 1
`

/**
 * ARGV: id; then, to roll, the new key's hash, id and record json. Removes the root key (remembering its hash as
 * revoked) and, when rolling, stores the new one. Returns {record json, last use or ''}, or false (nothing
 * written) when there is no such root key; a taken new hash or id is an error.
 */
export const REVOKE_ROOT_KEY_SCRIPT = `
local hash = redis.call('HGET', KEYS[2], ARGV[1])
if not hash then return false end
local doc = redis.call('HGET', KEYS[1], hash)
if not doc then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return false
end
if ARGV[2] and (redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 or redis.call('HEXISTS', KEYS[2], ARGV[3]) == 1) then
  return redis.error_reply('the new root key is taken')
end
local used = redis.call('HGET', KEYS[3], hash) or ''
redis.call('HDEL', KEYS[1], hash)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], hash)
redis.call('SADD', KEYS[4], hash)
if ARGV[2] then
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[4])
  redis.call('HSET', KEYS[2], ARGV[3], ARGV[2])
end
return {doc, used}
`

/** ARGV: hash, time (ms). Moves the last use forward, only for a root key that exists (a late touch revives none). */
export const TOUCH_ROOT_KEY_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
local used = redis.call('HGET', KEYS[3], ARGV[1])
if used and tonumber(used) >= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
return 1
`
