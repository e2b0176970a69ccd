import type { Redis } from 'ioredis'
import type { RedisClient } from '../redis/redis-connection.js'

/**
 * The webhook store's steps that touch more than one key, or read before they write, each one script in the `{wh}`
 * slot (redis-keys.ts): atomic on a single Redis and on a Cluster alike. Times are unix ms, sent as text.
 *
 * Endpoints' queues are named in the scripts, from their key prefix and the endpoint's id (a claim reaches queues it
 * cannot be told of before it runs): they are in `{wh}`, the slot of every key a script is given, so a Cluster serves
 * them from the node the script runs on.
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
 * KEYS: cursors. ARGV: shard, the epoch and revision the cursor was read at, the cursor's json at its new position.
 * Returns 1 moved, 0 it stands elsewhere (or is absent): nothing written.
 */
export const MOVE_CURSOR_SCRIPT = `
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then return 0 end
local at = cjson.decode(doc)
if at.epoch ~= ARGV[2] or at.rev ~= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[4])
return 1
`

/** KEYS: notice cursors. ARGV: shard, the notice id it was read at, the new one. Returns 1 moved, 0 not (as above). */
export const MOVE_NOTICE_CURSOR_SCRIPT = `
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
`

/**
 * KEYS: events, event times, deliveries, queued endpoints. ARGV: event id, event json, made at, due at, the queues' key
 * prefix, then a delivery id, its endpoint id and json per delivery. The event is kept unless it is (the same id is
 * the same event); each delivery is queued unless it is (its record is there: a delivery under way keeps its
 * attempts), and its endpoint is looked at by the time it is due. Returns how many records it wrote.
 */
export const ENQUEUE_SCRIPT = `
local written = 0
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
  written = 1
end
for i = 6, #ARGV, 3 do
  if redis.call('HSETNX', KEYS[3], ARGV[i], ARGV[i + 2]) == 1 then
    redis.call('ZADD', ARGV[5] .. ARGV[i + 1], ARGV[4], ARGV[i])
    redis.call('ZADD', KEYS[4], 'LT', ARGV[4], ARGV[i + 1])
    written = written + 1
  end
end
return written
`

/**
 * The claim's first step, and the only place that reads the last releases' single queue (KEYS[3]): a batch of it
 * (ARGV[6]) moved into the per-endpoint queues, each delivery at the time it was due, until it is empty and gone. Data
 * already queued on an existing Redis is thereby migrated as the claims first see it; until it is, complete, retry and
 * deadLetter find a delivery in either queue.
 */
const MOVE_LEGACY_QUEUE = `
local legacy = redis.call('ZRANGE', KEYS[3], 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
for i = 1, #legacy, 2 do
  local id, due = legacy[i], legacy[i + 1]
  local doc = redis.call('HGET', KEYS[2], id)
  if doc then
    local endpoint = cjson.decode(doc).endpointId
    redis.call('ZADD', ARGV[5] .. endpoint, due, id)
    redis.call('ZADD', KEYS[1], 'LT', due, endpoint)
  end
  redis.call('ZREM', KEYS[3], id)
end
`

/**
 * KEYS: queued endpoints, deliveries, the legacy queue. ARGV: now, lease end, limit, how many endpoints to look at, the
 * queues' key prefix, how many legacy deliveries to move, the number of lanes, each lane's room and when what it passes
 * over is looked at again, the lane and room of an endpoint not listed, then an endpoint id, lane and room per endpoint
 * listed (lanes counted from 0). The endpoints due at `now` in their order, and of each its deliveries due, oldest
 * first, as many as it, its lane and the claim have room for, each made due at the lease's end. An endpoint is then
 * looked at next when its earliest delivery is due; one that still has deliveries due that it had no room for, while
 * the claim had (passed over), at its lane's time, or when a lease of its ends if that is sooner; one that had room but
 * whose lane had none, a thousandth of a ms after `now` per endpoint so left (in the order they were looked at): first
 * at the next claim, before those that took their room, so that a lane's endpoints take turns. Every
 * endpoint looked at leaves the range due at `now` but the last when the claim is full, so each page is read from the
 * range's start. Returns the claimed ones' json.
 */
export const CLAIM_DUE_SCRIPT = `${MOVE_LEGACY_QUEUE}
local now, limit, scan, prefix = tonumber(ARGV[1]), tonumber(ARGV[3]), tonumber(ARGV[4]), ARGV[5]
local lanes = tonumber(ARGV[7])
local laneRoom, laneUntil, total = {}, {}, 0
for l = 1, lanes do
  laneRoom[l], laneUntil[l] = tonumber(ARGV[6 + 2 * l]), ARGV[7 + 2 * l]
  total = total + math.max(0, laneRoom[l])
end
limit = math.min(limit, total)
local at = 8 + 2 * lanes
local otherLane, otherRoom = tonumber(ARGV[at]) + 1, tonumber(ARGV[at + 1])
local lane, room = {}, {}
for i = at + 2, #ARGV, 3 do
  lane[ARGV[i]], room[ARGV[i]] = tonumber(ARGV[i + 1]) + 1, tonumber(ARGV[i + 2])
end
local claimed, looked, waited = {}, 0, 0
while #claimed < limit and looked < scan do
  local endpoints = redis.call('ZRANGE', KEYS[1], '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, math.min(16, scan - looked))
  if #endpoints == 0 then break end
  for _, endpoint in ipairs(endpoints) do
    if #claimed >= limit then break end
    looked = looked + 1
    local queue = prefix .. endpoint
    if not lane[endpoint] then lane[endpoint], room[endpoint] = otherLane, otherRoom end
    local l = lane[endpoint]
    local take = math.min(room[endpoint], laneRoom[l], limit - #claimed)
    if take > 0 then
      for _, id in ipairs(redis.call('ZRANGE', queue, '-inf', ARGV[1], 'BYSCORE', 'LIMIT', 0, take)) do
        local doc = redis.call('HGET', KEYS[2], id)
        if doc then
          room[endpoint], laneRoom[l] = room[endpoint] - 1, laneRoom[l] - 1
          redis.call('ZADD', queue, 'XX', ARGV[2], id)
          claimed[#claimed + 1] = doc
        else
          -- Queued without its record (a release before this one completed it): nothing could ever deliver it.
          redis.call('ZREM', queue, id)
        end
      end
    end
    local first = redis.call('ZRANGE', queue, 0, 0, 'WITHSCORES')
    if #first == 0 then
      redis.call('ZREM', KEYS[1], endpoint)
    elseif tonumber(first[2]) > now or #claimed >= limit or (room[endpoint] > 0 and laneRoom[l] > 0) then
      -- Nothing due left, or the claim (not the endpoint) was full: looked at when its first delivery is due.
      redis.call('ZADD', KEYS[1], first[2], endpoint)
    elseif room[endpoint] > 0 then
      -- Its lane was full, not its own slots: first in line at the next claim, in the order it waited in this one.
      waited = waited + 1
      redis.call('ZADD', KEYS[1], string.format('%d.%03d', now, waited), endpoint)
    else
      local untilMs = laneUntil[l]
      local leased = redis.call('ZRANGE', queue, '(' .. ARGV[1], '+inf', 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
      if #leased > 0 and tonumber(leased[2]) < tonumber(untilMs) then untilMs = leased[2] end
      redis.call('ZADD', KEYS[1], untilMs, endpoint)
    end
  end
end
return claimed
`

/**
 * KEYS: deliveries, queued endpoints, the legacy queue. ARGV: id, attempts, due at, the queues' key prefix. Nothing (0)
 * unless the delivery is still queued (in its endpoint's queue, or the legacy one until that is moved).
 */
export const RETRY_SCRIPT = `
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then return 0 end
local endpoint = cjson.decode(doc).endpointId
local queue = ARGV[4] .. endpoint
if redis.call('ZSCORE', queue, ARGV[1]) then
  redis.call('ZADD', queue, ARGV[3], ARGV[1])
  redis.call('ZADD', KEYS[2], 'LT', ARGV[3], endpoint)
elseif redis.call('ZSCORE', KEYS[3], ARGV[1]) then
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[1])
else
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], (string.gsub(doc, '^{"attempts":%d+', '{"attempts":' .. ARGV[2], 1)))
return 1
`

/**
 * KEYS: deliveries, queued endpoints, the legacy queue. ARGV: id, the queues' key prefix. Off the queue; an endpoint
 * with nothing left queued off the queued endpoints.
 */
export const COMPLETE_SCRIPT = `
redis.call('ZREM', KEYS[3], ARGV[1])
local doc = redis.call('HGET', KEYS[1], ARGV[1])
if not doc then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
local endpoint = cjson.decode(doc).endpointId
local queue = ARGV[2] .. endpoint
redis.call('ZREM', queue, ARGV[1])
if redis.call('EXISTS', queue) == 0 then redis.call('ZREM', KEYS[2], endpoint) end
return 1
`

/**
 * KEYS: deliveries, queued endpoints, the legacy queue, the endpoint's queue, its dead letters, endpoints. ARGV: id,
 * delivery json, how many dead letters are kept, endpoint id. Off the queue and into the dead letters, only if it was
 * still queued: one delivery is never dead twice; and only if its endpoint still exists: a delete's lists are never
 * brought back.
 */
export const DEAD_LETTER_SCRIPT = `
if redis.call('ZREM', KEYS[4], ARGV[1]) + redis.call('ZREM', KEYS[3], ARGV[1]) == 0 then return 0 end
redis.call('HDEL', KEYS[1], ARGV[1])
if redis.call('EXISTS', KEYS[4]) == 0 then redis.call('ZREM', KEYS[2], ARGV[4]) end
if redis.call('HEXISTS', KEYS[6], ARGV[4]) == 0 then return 0 end
redis.call('LPUSH', KEYS[5], ARGV[2])
redis.call('LTRIM', KEYS[5], 0, tonumber(ARGV[3]) - 1)
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
  webhookMoveCursor(cursors: string, ...args: Arg[]): Promise<number>
  webhookMoveNoticeCursor(noticeCursors: string, ...args: Arg[]): Promise<number>
  webhookEnqueue(events: string, times: string, deliveries: string, queued: string, ...args: Arg[]): Promise<number>
  webhookClaimDue(queued: string, deliveries: string, legacy: string, ...args: Arg[]): Promise<string[]>
  webhookRetry(deliveries: string, queued: string, legacy: string, ...args: Arg[]): Promise<number>
  webhookComplete(deliveries: string, queued: string, legacy: string, ...args: Arg[]): Promise<number>
  webhookDeadLetter(
    deliveries: string,
    queued: string,
    legacy: string,
    queue: string,
    dead: string,
    endpoints: string,
    ...args: Arg[]
  ): Promise<number>
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
  ['webhookMoveCursor', 1, MOVE_CURSOR_SCRIPT],
  ['webhookMoveNoticeCursor', 1, MOVE_NOTICE_CURSOR_SCRIPT],
  ['webhookEnqueue', 4, ENQUEUE_SCRIPT],
  ['webhookClaimDue', 3, CLAIM_DUE_SCRIPT],
  ['webhookRetry', 3, RETRY_SCRIPT],
  ['webhookComplete', 3, COMPLETE_SCRIPT],
  ['webhookDeadLetter', 6, DEAD_LETTER_SCRIPT],
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
