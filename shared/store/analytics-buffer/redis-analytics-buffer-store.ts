import type { Redis } from 'ioredis'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'
import type { AnalyticsBufferStore, BufferedBatch, BufferLook, ThroughReport } from './analytics-buffer-store.js'

/**
 * KEYS: the buffer's stream, its state. ARGV: the batch, its rows, the bound in bytes. Each entry holds `b` (the
 * batch), `r` (its rows) and `n` (its bytes); the state's `bytes` is the sum of `n` held, `trimmed` the rows removed to
 * stay within the bound. Returns the rows removed (or the batch's own, if it alone is over the bound).
 */
const APPEND_SCRIPT = `
local size = string.len(ARGV[1])
local rows = tonumber(ARGV[2])
local max = tonumber(ARGV[3])
if size > max then
  redis.call('HINCRBY', KEYS[2], 'trimmed', rows)
  return rows
end
local bytes = tonumber(redis.call('HGET', KEYS[2], 'bytes') or '0')
local trimmed = 0
while bytes + size > max do
  local oldest = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', 1)
  if #oldest == 0 then
    bytes = 0
    break
  end
  local fields = oldest[1][2]
  for i = 1, #fields, 2 do
    if fields[i] == 'r' then trimmed = trimmed + tonumber(fields[i + 1]) end
    if fields[i] == 'n' then bytes = bytes - tonumber(fields[i + 1]) end
  end
  redis.call('XDEL', KEYS[1], oldest[1][1])
end
redis.call('XADD', KEYS[1], '*', 'b', ARGV[1], 'r', rows, 'n', size)
redis.call('HSET', KEYS[2], 'bytes', bytes + size)
if trimmed > 0 then redis.call('HINCRBY', KEYS[2], 'trimmed', trimmed) end
return trimmed
`

/** KEYS: stream, state. ARGV: limit. Returns {bytes, trimmed, pending first, pending last, entries}. */
const LOOK_SCRIPT = `
local state = redis.call('HMGET', KEYS[2], 'bytes', 'trimmed', 'first', 'last')
local entries
if state[3] then
  entries = redis.call('XRANGE', KEYS[1], state[3], state[4])
else
  entries = redis.call('XRANGE', KEYS[1], '-', '+', 'COUNT', ARGV[1])
end
return {state[1] or '0', state[2] or '0', state[3] or '', state[4] or '', entries}
`

/** KEYS: stream, state. ARGV: the last id completed. Removes the entries up to it and clears pending. */
const COMPLETE_SCRIPT = `
local done = redis.call('XRANGE', KEYS[1], '-', ARGV[1])
local freed = 0
for _, entry in ipairs(done) do
  local fields = entry[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'n' then freed = freed + tonumber(fields[i + 1]) end
  end
  redis.call('XDEL', KEYS[1], entry[1])
end
if freed > 0 then redis.call('HINCRBY', KEYS[2], 'bytes', -freed) end
redis.call('HDEL', KEYS[2], 'first', 'last')
return #done
`

const HOLD_LEASE_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`

const RELEASE_LEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`

/** KEYS: the marks. ARGV: the mark's name, the value. Sets it unless it is there or past already. */
const RAISE_MARK_SCRIPT = `
local current = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '')
if current == nil or current < tonumber(ARGV[2]) then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end
return 1
`

type Entry = [id: string, fields: string[]]

interface BufferScripts {
  analyticsAppend(stream: string, state: string, batch: string, rows: number, maxBytes: number): Promise<number>
  analyticsLook(stream: string, state: string, limit: number): Promise<[string, string, string, string, Entry[]]>
  analyticsComplete(stream: string, state: string, last: string): Promise<number>
  analyticsHoldLease(lease: string, holder: string, ttlMs: number): Promise<number>
  analyticsReleaseLease(lease: string, holder: string): Promise<number>
  analyticsRaiseMark(marks: string, name: string, value: number): Promise<number>
}

/** The analytics buffers on Redis: a stream and a state hash per buffer, in a slot of their own (redis-keys.ts). */
export class RedisAnalyticsBufferStore implements AnalyticsBufferStore {
  private readonly redis: Redis & BufferScripts

  constructor(redis: RedisClient) {
    for (const [name, lua] of [
      ['analyticsAppend', APPEND_SCRIPT],
      ['analyticsLook', LOOK_SCRIPT],
      ['analyticsComplete', COMPLETE_SCRIPT],
    ] as const) {
      redis.defineCommand(name, { numberOfKeys: 2, lua })
    }
    redis.defineCommand('analyticsHoldLease', { numberOfKeys: 1, lua: HOLD_LEASE_SCRIPT })
    redis.defineCommand('analyticsReleaseLease', { numberOfKeys: 1, lua: RELEASE_LEASE_SCRIPT })
    redis.defineCommand('analyticsRaiseMark', { numberOfKeys: 1, lua: RAISE_MARK_SCRIPT })
    this.redis = redis as unknown as Redis & BufferScripts
  }

  append(shard: number, batch: string, rows: number, maxBytes: number): Promise<number> {
    const { stream, state } = keysOf(shard)
    return storeCall(() => this.redis.analyticsAppend(stream, state, batch, rows, maxBytes))
  }

  async look(shard: number, limit: number): Promise<BufferLook> {
    const { stream, state } = keysOf(shard)
    const [bytes, trimmed, first, last, entries] = await storeCall(() => this.redis.analyticsLook(stream, state, limit))
    return {
      bytes: Number(bytes),
      trimmedRows: Number(trimmed),
      ...(first === '' ? {} : { pending: { first, last } }),
      batches: entries.map(batchOf),
    }
  }

  async take(shard: number, first: string, last: string): Promise<void> {
    await storeCall(() => this.redis.hset(keysOf(shard).state, 'first', first, 'last', last))
  }

  async complete(shard: number, last: string): Promise<void> {
    const { stream, state } = keysOf(shard)
    await storeCall(() => this.redis.analyticsComplete(stream, state, last))
  }

  async holdLease(name: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await storeCall(() => this.redis.analyticsHoldLease(redisKeys.analyticsLease(name), holder, ttlMs))) === 1
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await storeCall(() => this.redis.analyticsReleaseLease(redisKeys.analyticsLease(name), holder))
  }

  async reportThrough(process: string, through: number, at: number): Promise<void> {
    await storeCall(() => this.redis.hset(redisKeys.analyticsReports, process, `${through}:${at}`))
  }

  async forgetProcesses(processes: readonly string[]): Promise<void> {
    if (processes.length > 0) await storeCall(() => this.redis.hdel(redisKeys.analyticsReports, ...processes))
  }

  async readReports(): Promise<Map<string, ThroughReport>> {
    const reports = await storeCall(() => this.redis.hgetall(redisKeys.analyticsReports))
    const read = new Map<string, ThroughReport>()
    for (const [process, value] of Object.entries(reports)) {
      const [through, at] = value.split(':').map(Number)
      if (Number.isFinite(through) && Number.isFinite(at)) read.set(process, { through: through!, at: at! })
    }
    return read
  }

  async readMark(name: string): Promise<number | undefined> {
    const value = await storeCall(() => this.redis.hget(redisKeys.analyticsMarks, name))
    return value === null ? undefined : Number(value)
  }

  async raiseMark(name: string, value: number): Promise<void> {
    await storeCall(() => this.redis.analyticsRaiseMark(redisKeys.analyticsMarks, name, value))
  }
}

const keysOf = (shard: number) => ({
  stream: redisKeys.analyticsBuffer(shard),
  state: redisKeys.analyticsBufferState(shard),
})

function batchOf([id, fields]: Entry): BufferedBatch {
  let batch = ''
  let rows = 0
  for (let i = 0; i < fields.length; i += 2) {
    if (fields[i] === 'b') batch = fields[i + 1]!
    else if (fields[i] === 'r') rows = Number(fields[i + 1])
  }
  return { id, batch, rows }
}
