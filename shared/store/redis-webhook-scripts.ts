import type { Redis } from 'ioredis'
import type { RedisClient } from './redis-connection.js'

/**
 * The webhook store's steps that touch more than one key, or read before they write, each one script in the `{wh}`
 * slot (redis-keys.ts): atomic on a single Redis and on a Cluster alike. Times are unix ms, sent as text.
 *
 * A delivery's json starts with its attempts (`{"attempts":N,…`, as redis-webhook-store.ts writes it), so that RETRY
 * rewrites that number in place: cjson would re-encode the other numbers with 14 significant digits.
 */

/**
 * KEYS: endpoints. ARGV: id, the revision it was read at, endpoint json at the next revision. Returns 1 replaced, 0 the
 * endpoint is gone, -1 it is at another revision (nothing written either way). An endpoint's json starts with its
 * revision once it was replaced (`{"revision":N,…`, as redis-webhook-store.ts writes it); one never replaced has none.
 */
export const REPLACE_ENDPOINT_SCRIPT = `
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then return 0 end
if tonumber(string.match(doc, '^{"revision":(%d+)') or '0') ~= tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`

/**
 * KEYS: endpoints, the endpoint's attempts, its tests' attempts, its dead letters. ARGV: id. Returns 1 removed, 0 it
 * was not there (its lists go anyway: an attempt recorded while it was being deleted leaves nothing behind).
 */
export const DELETE_ENDPOINT_SCRIPT = `
redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
return redis.call('HDEL', KEYS[1], ARGV[1])
`

/**
 * KEYS: events, event times, deliveries, due. ARGV: event id, event json, made at, due at, then a delivery id and json
 * per endpoint. The event is kept unless it is (the same id is the same event); each delivery is queued unless it
 * is (ZADD NX): its record is written only then, so a delivery under way keeps its attempts. Returns how many
 * records it wrote.
 */
export const ENQUEUE_SCRIPT = `
local written = 0
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  written = 1
end
for i = 5, #ARGV, 2 do
  if redis.call('ZADD', KEYS[4], 'NX', ARGV[4], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1])
    written = written + 1
  end
end
return written
`

/**
 * KEYS: due, deliveries. ARGV: now, lease end, limit, how many due ones to look at, the number of lanes, each lane's
 * room and when what it passes over is due again, the lane and room of an endpoint not listed, then an endpoint id,
 * lane and room per endpoint listed (lanes counted from 0). The deliveries due at `now`, oldest first, each made due at
 * the lease's end in the same step while its endpoint and its lane have room, else made due at its lane's time. Every
 * one looked at leaves the range due at `now` (both times are after it), so each page is read from the range's start.
 * Returns the claimed ones' json.
 */
export const CLAIM_DUE_SCRIPT = `
local limit, scan, lanes = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local laneRoom, laneUntil, total = {}, {}, 0
for l = 1, lanes do
  laneRoom[l], laneUntil[l] = tonumber(ARGV[4 + 2 * l]), ARGV[5 + 2 * l]
  total = total + math.max(0, laneRoom[l])
end
limit = math.min(limit, total)
local at = 6 + 2 * lanes
local otherLane, otherRoom = tonumber(ARGV[at]) + 1, tonumber(ARGV[at + 1])
local lane, room = {}, {}
for i = at + 2, #ARGV, 3 do
  lane[ARGV[i]], room[ARGV[i]] = tonumber(ARGV[i + 1]) + 1, tonumber(ARGV[i + 2])
end
local claimed, looked = {}, 0
while #claimed < limit and looked < scan do
  local ids = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, math.min(limit - #claimed, scan - looked))
  if #ids == 0 then break end
  for _, id in ipairs(ids) do
    looked = looked + 1
    local doc = redis.call('HGET', KEYS[2], id)
    if not doc then
      -- Queued without its record (none of these scripts leaves one so): nothing could ever deliver it.
      redis.call('ZREM', KEYS[1], id)
    else
      local endpoint = cjson.decode(doc).endpointId
      if not lane[endpoint] then lane[endpoint], room[endpoint] = otherLane, otherRoom end
      local l = lane[endpoint]
      if room[endpoint] > 0 and laneRoom[l] > 0 then
        room[endpoint], laneRoom[l] = room[endpoint] - 1, laneRoom[l] - 1
        redis.call('ZADD', KEYS[1], 'XX', ARGV[2], id)
        claimed[#claimed + 1] = doc
      else
        redis.call('ZADD', KEYS[1], 'XX', laneUntil[l], id)
      end
    end
  end
end
return claimed
`

/** KEYS: due, deliveries. ARGV: id, attempts, due at. Nothing (0) unless the delivery is still queued. */
export const RETRY_SCRIPT = `
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
local doc = redis.call('HGET', KEYS[2], ARGV[1])
if not doc then return 0 end
redis.call('HSET', KEYS[2], ARGV[1], (string.gsub(doc, '^{"attempts":%d+', '{"attempts":' .. ARGV[2], 1)))
redis.call('ZADD', KEYS[1], 'XX', ARGV[3], ARGV[1])
return 1
`

/** KEYS: due, deliveries. ARGV: id. Off the queue. */
export const COMPLETE_SCRIPT = `
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
`

/**
 * KEYS: due, deliveries, the endpoint's dead letters, endpoints. ARGV: id, delivery json, how many dead letters are
 * kept, endpoint id. Off the queue and into the dead letters, only if it was still queued: one delivery is never dead
 * twice; and only if its endpoint still exists: a delete's lists are never brought back.
 */
export const DEAD_LETTER_SCRIPT = `
if redis.call('ZREM', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
if redis.call('HEXISTS', KEYS[4], ARGV[4]) == 0 then return 0 end
redis.call('LPUSH', KEYS[3], ARGV[2])
redis.call('LTRIM', KEYS[3], 0, tonumber(ARGV[3]) - 1)
return 1
`

/**
 * KEYS: endpoints, the endpoint's attempts (or its tests'). ARGV: endpoint id, attempt json, how many are kept. Only
 * while the endpoint exists: an attempt settled after its endpoint was deleted leaves no list behind.
 */
export const RECORD_ATTEMPT_SCRIPT = `
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)
return 1
`

/**
 * KEYS: deadlines. ARGV: now, lease end, limit. The deadlines due, oldest first, each made due at the lease's end in
 * the same step (the caller removes it once its event is queued).
 */
export const CLAIM_DEADLINES_SCRIPT = `
local members = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[3])
for _, member in ipairs(members) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return members
`

/** KEYS: the lease. ARGV: holder, ttl. Taken if free (or expired: then the key is gone), renewed if the holder's. */
export const HOLD_LEASE_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`

/** KEYS: lease. ARGV: holder. Deletes the lease only if the holder has it. */
export const RELEASE_LEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`

/**
 * KEYS: event times, events. ARGV: since, limit, the id of the event to go on after ('' none). The events after that
 * one in the times' order (made at, then id) while it is kept, else those made from `since` on: one step, so that
 * pruning never moves the ranks between reading one and the range. Returns the events' json.
 */
export const LIST_EVENTS_SCRIPT = `
local start = ARGV[3] ~= '' and redis.call('ZRANK', KEYS[1], ARGV[3])
if start then start = start + 1 else start = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[1]) end
local ids = redis.call('ZRANGE', KEYS[1], start, start + tonumber(ARGV[2]) - 1)
if #ids == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(ids))
`

/**
 * KEYS: events, event times. ARGV: before, batch size. Forgets up to a batch of the events older than `before`
 * (a script call each, so that a large backlog never holds Redis for long). Returns how many it forgot.
 */
export const PRUNE_EVENTS_SCRIPT = `
local ids = redis.call('ZRANGE', KEYS[2], '-inf', '(' .. ARGV[1], 'BYSCORE', 'LIMIT', 0, ARGV[2])
for _, id in ipairs(ids) do
  redis.call('HDEL', KEYS[1], id)
  redis.call('ZREM', KEYS[2], id)
end
return #ids
`

type Arg = string | number

/** The scripts as commands on a connection (defineWebhookScripts): keys first, as each script's comment lists them. */
export interface WebhookScripts {
  webhookReplaceEndpoint(endpoints: string, ...args: Arg[]): Promise<number>
  webhookDeleteEndpoint(endpoints: string, attempts: string, tests: string, dead: string, id: string): Promise<number>
  webhookEnqueue(events: string, times: string, deliveries: string, due: string, ...args: Arg[]): Promise<number>
  webhookClaimDue(due: string, deliveries: string, ...args: Arg[]): Promise<string[]>
  webhookRetry(due: string, deliveries: string, ...args: Arg[]): Promise<number>
  webhookComplete(due: string, deliveries: string, id: string): Promise<number>
  webhookDeadLetter(due: string, deliveries: string, dead: string, endpoints: string, ...args: Arg[]): Promise<number>
  webhookRecordAttempt(endpoints: string, attempts: string, ...args: Arg[]): Promise<number>
  webhookClaimDeadlines(deadlines: string, ...args: Arg[]): Promise<string[]>
  webhookHoldLease(lease: string, holder: string, ttlMs: Arg): Promise<number>
  webhookReleaseLease(lease: string, holder: string): Promise<number>
  webhookPruneEvents(events: string, times: string, ...args: Arg[]): Promise<number>
  webhookListEvents(times: string, events: string, ...args: Arg[]): Promise<(string | null)[]>
}

const SCRIPTS: [keyof WebhookScripts, number, string][] = [
  ['webhookReplaceEndpoint', 1, REPLACE_ENDPOINT_SCRIPT],
  ['webhookDeleteEndpoint', 4, DELETE_ENDPOINT_SCRIPT],
  ['webhookEnqueue', 4, ENQUEUE_SCRIPT],
  ['webhookClaimDue', 2, CLAIM_DUE_SCRIPT],
  ['webhookRetry', 2, RETRY_SCRIPT],
  ['webhookComplete', 2, COMPLETE_SCRIPT],
  ['webhookDeadLetter', 4, DEAD_LETTER_SCRIPT],
  ['webhookRecordAttempt', 2, RECORD_ATTEMPT_SCRIPT],
  ['webhookClaimDeadlines', 1, CLAIM_DEADLINES_SCRIPT],
  ['webhookHoldLease', 1, HOLD_LEASE_SCRIPT],
  ['webhookReleaseLease', 1, RELEASE_LEASE_SCRIPT],
  ['webhookPruneEvents', 2, PRUNE_EVENTS_SCRIPT],
  ['webhookListEvents', 2, LIST_EVENTS_SCRIPT],
]

/** Defines the scripts on `redis` (EVALSHA, loaded on first use) and answers it typed with them. */
export function defineWebhookScripts(redis: RedisClient): Redis & WebhookScripts {
  for (const [name, numberOfKeys, lua] of SCRIPTS) redis.defineCommand(name, { numberOfKeys, lua })
  return redis as unknown as Redis & WebhookScripts
}
