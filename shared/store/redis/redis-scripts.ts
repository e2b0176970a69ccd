import { CHANGE_SNAPSHOTS_MAX_LEN } from '../change-snapshots/change-snapshot-store.js'

/**
 * The one write script: every change that can alter a verdict goes through it, so revision bump, record
 * write, log append and publish are one atomic step in one hash slot. The log entry is appended before the
 * record is touched so that a refused XADD leaves nothing half-written. PUBLISH runs under pcall: a refused
 * publish must not undo a durable write (the log is the repair path), so it is only reported back.
 *
 * KEYS: record, revision counter, change log, the shard's snapshots (change-snapshot-store.ts).
 * ARGV: kind (created|updated|deleted), expected rev ('' = any), doc json, keyId, hash, apiId, log max length,
 *       channel, shard, epoch to use if the shard has none yet, credits ('' leave, 'del', 'stamp' = restart the
 *       refill clock, or the balance to set), now (unix ms, the refill clock's start), the fields an update changed
 *       (comma-separated, kept in the log entry only; '' or absent: none), '1' to keep a snapshot of the record as
 *       the write leaves it (a delete: as it was), at the log entry's id ('' or absent: none), the id of the key's
 *       identity for the snapshot ('' or absent: none).
 * Returns {rev, 'published'|'publish-failed', epoch} or {0, 'exists'|'missing'|'conflict'}. Keygate's Redis must
 * run with `maxmemory-policy noeviction` (and AOF); should the counter be lost anyway, the log's last id takes over.
 */
export const WRITE_KEY_SCRIPT = `
local kind = ARGV[1]
local current = redis.call('HGET', KEYS[1], 'rev')
if kind == 'created' then
  if current then return {0, 'exists'} end
else
  if not current then return {0, 'missing'} end
  if ARGV[2] ~= '' and current ~= ARGV[2] then return {0, 'conflict'} end
end
local state = redis.call('HMGET', KEYS[2], 'rev', 'epoch')
local rev = 0
local epoch = state[2] or ARGV[10]
-- A new epoch: snapshots of the lost sequence name revisions that will be written again by other changes.
if not state[2] then redis.call('DEL', KEYS[4]) end
if state[1] then
  rev = tonumber(state[1])
elseif redis.call('EXISTS', KEYS[3]) == 1 then
  -- The counter is gone (evicted) but the log is not: carry on from the log's last id, which XADD requires.
  -- The epoch is new then (ARGV[10] is fresh on every call), so verifiers drop what they hold of the shard.
  local info = redis.call('XINFO', 'STREAM', KEYS[3])
  for i = 1, #info, 2 do
    if info[i] == 'last-generated-id' then rev = tonumber(string.match(info[i + 1], '^(%d+)')) end
  end
end
rev = rev + 1
if ARGV[13] and ARGV[13] ~= '' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], rev .. '-1',
    'kind', kind, 'keyId', ARGV[4], 'hash', ARGV[5], 'apiId', ARGV[6], 'fields', ARGV[13])
else
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[7], rev .. '-1',
    'kind', kind, 'keyId', ARGV[4], 'hash', ARGV[5], 'apiId', ARGV[6])
end
redis.call('HSET', KEYS[2], 'rev', rev, 'epoch', epoch)
local snapshot
if ARGV[14] == '1' and kind == 'deleted' then snapshot = redis.call('HMGET', KEYS[1], 'doc', 'credits') end
if kind == 'deleted' then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'rev', rev, 'doc', ARGV[3])
  -- The credit balance lives beside the document: touched only when the write says so.
  if ARGV[11] == 'del' then
    redis.call('HDEL', KEYS[1], 'credits', 'refilledAt')
  elseif ARGV[11] == 'stamp' then
    -- A refill was just configured: it counts from now, not from when the balance was set.
    redis.call('HSET', KEYS[1], 'refilledAt', ARGV[12])
  elseif ARGV[11] ~= '' then
    redis.call('HSET', KEYS[1], 'credits', ARGV[11], 'refilledAt', ARGV[12])
  end
  if ARGV[14] == '1' then snapshot = {ARGV[3], redis.call('HGET', KEYS[1], 'credits')} end
end
if snapshot and snapshot[1] then
  -- For the webhooks' deriver alone, so that an event describes this write whatever follows it. Under pcall: a
  -- refused snapshot must not fail a durable write (the deriver then describes the record as it finds it). Its id
  -- can only be refused if the shard's snapshots outlived its log (then they are stale: dropped).
  local entry = {'XADD', KEYS[4], 'MAXLEN', '~', '${CHANGE_SNAPSHOTS_MAX_LEN}', rev .. '-1', 'doc', snapshot[1]}
  if snapshot[2] then
    table.insert(entry, 'credits')
    table.insert(entry, snapshot[2])
  end
  if ARGV[15] and ARGV[15] ~= '' then
    table.insert(entry, 'identityId')
    table.insert(entry, ARGV[15])
  end
  local added = redis.pcall(unpack(entry))
  if type(added) == 'table' and added.err then
    redis.call('DEL', KEYS[4])
    redis.pcall(unpack(entry))
  end
end
-- The publish time (Redis' clock, microseconds; scripts replicate their effects, so TIME is allowed) lets
-- verifiers measure how long the news took to reach them.
local time = redis.call('TIME')
local event = '{"v":1,"shard":' .. ARGV[9] .. ',"epoch":' .. cjson.encode(epoch) .. ',"rev":' .. rev .. ',"kind":"' .. kind .. '","keyId":' ..
  cjson.encode(ARGV[4]) .. ',"hash":' .. cjson.encode(ARGV[5]) .. ',"apiId":' .. cjson.encode(ARGV[6]) ..
  ',"at":' .. time[1] .. string.format('%06d', tonumber(time[2])) .. '}'
local published = redis.pcall('PUBLISH', ARGV[8], event)
if type(published) == 'table' and published.err then return {rev, 'publish-failed', epoch} end
return {rev, 'published', epoch}
`

/**
 * Lua: `notify(before, after, keyId, apiId, threshold, maxLen, channel, shard)`, shared by the two credit scripts
 * below. A notice logged is published as a hint (shared/keys/credit-notice.ts parseCreditNoticeHint), under pcall as
 * the write script's event is: a refused publish never undoes the balance, and the webhooks' deriver reads the log
 * anyway.
 */
const CREDIT_NOTICES = `
-- The credit notices (shared/keys/credit-notice.ts creditNoticeKinds: the same rule), into the shard's notice log.
local function notify(before, after, keyId, apiId, threshold, maxLen, channel, shard)
  if keyId == '' or after >= before then return end
  local limit = tonumber(threshold)
  local logged = false
  if limit and before > limit and after <= limit then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', maxLen, '*', 'kind', 'low', 'keyId', keyId, 'apiId', apiId,
      'remaining', string.format('%d', after), 'threshold', threshold)
    logged = true
  end
  if after == 0 then
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', maxLen, '*', 'kind', 'exhausted', 'keyId', keyId, 'apiId', apiId,
      'remaining', '0')
    logged = true
  end
  if logged then redis.pcall('PUBLISH', channel, '{"v":1,"notice":' .. shard .. '}') end
end
`

/**
 * Spends credits of one key atomically, so that N verifiers sharing one Redis let exactly `remaining` calls
 * through. Refill is lazy: if the last refill is older than the boundary the verifier computed, the balance
 * is reset to the refill amount first.
 *
 * KEYS: record, the shard's credit notice log. ARGV: cost, refill boundary ('' = no refill), refill amount, now, then
 * for the notices: key id ('' = none), api id, low threshold ('' = none), the log's max length, the change channel,
 * the shard.
 * Returns {1, balance} spent, {0, balance} not enough, {-1, 0} the key carries no credits (or is gone).
 */
export const SPEND_CREDITS_SCRIPT = `
${CREDIT_NOTICES}
local credits = redis.call('HGET', KEYS[1], 'credits')
if not credits then return {-1, 0} end
credits = tonumber(credits)
if ARGV[2] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'refilledAt') or '0') < tonumber(ARGV[2]) then
  credits = tonumber(ARGV[3])
  redis.call('HSET', KEYS[1], 'credits', credits, 'refilledAt', ARGV[4])
end
local cost = tonumber(ARGV[1])
if credits < cost then return {0, credits} end
if cost > 0 then
  local before = credits
  credits = redis.call('HINCRBY', KEYS[1], 'credits', -cost)
  notify(before, credits, ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9], ARGV[10])
end
return {1, credits}
`

/**
 * keys.updateRemaining (and rerollKey's `take`): KEYS: record, the shard's credit notice log. ARGV: op
 * (increment|decrement|set|take), value, refill boundary ('' = no refill), refill amount, now, cap, then for the
 * notices as SPEND_CREDITS_SCRIPT: key id ('' = none), api id, low threshold, the log's max length, the change channel,
 * the shard.
 * A refill that is due is applied first, so an update is never undone by it later; `set` restarts the refill
 * clock. Returns the new balance (0..cap; `take`: the balance taken, leaving 0), or -1 without credits.
 */
export const UPDATE_CREDITS_SCRIPT = `
${CREDIT_NOTICES}
local credits = redis.call('HGET', KEYS[1], 'credits')
if not credits then return -1 end
credits = tonumber(credits)
if ARGV[3] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'refilledAt') or '0') < tonumber(ARGV[3]) then
  credits = tonumber(ARGV[4])
  redis.call('HSET', KEYS[1], 'refilledAt', ARGV[5])
end
local value = tonumber(ARGV[2])
local next
if ARGV[1] == 'set' then
  next = value
  redis.call('HSET', KEYS[1], 'refilledAt', ARGV[5])
elseif ARGV[1] == 'increment' then next = credits + value
elseif ARGV[1] == 'take' then next = 0
else next = math.max(0, credits - value) end
next = math.min(next, tonumber(ARGV[6]))
redis.call('HSET', KEYS[1], 'credits', string.format('%d', next))
notify(credits, next, ARGV[7], ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12])
if ARGV[1] == 'take' then return credits end
return next
`

/**
 * Exact fixed-window rate limits of one call, all or nothing: the call is admitted only if every window has
 * room for its cost, and then charged to every window; otherwise nothing is charged.
 * KEYS: window counters (all in the key's slot). ARGV: limit, cost, ttl ms — three per key.
 * Returns {0, used…} when admitted (usage after), or {i, used…} where i is the first limit without room.
 */
export const CONSUME_RATE_LIMITS_SCRIPT = `
local used = {}
local failed = 0
for i = 1, #KEYS do
  local b = 3 * (i - 1)
  used[i] = tonumber(redis.call('GET', KEYS[i]) or '0')
  if failed == 0 and used[i] + tonumber(ARGV[b + 2]) > tonumber(ARGV[b + 1]) then failed = i end
end
if failed == 0 then
  for i = 1, #KEYS do
    local b = 3 * (i - 1)
    used[i] = redis.call('INCRBY', KEYS[i], ARGV[b + 2])
    redis.call('PEXPIRE', KEYS[i], ARGV[b + 3])
  end
end
return {failed, unpack(used)}
`
