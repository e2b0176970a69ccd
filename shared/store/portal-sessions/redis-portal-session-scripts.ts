import type { Redis } from 'ioredis'
import type { RedisClient } from '../redis/redis-connection.js'

/**
 * The portal session store's steps, each one script in the `{ps}` slot (redis-keys.ts): atomic on a single Redis and
 * on a Cluster alike. Every script names the same four keys: sessions, codes, tokens, expiry. A session's json is
 * written once; its state lives in fields beside it (`<id>:t`…), so that no script re-encodes json (cjson would
 * round numbers to 14 significant digits). Times are unix ms, sent as text.
 */

/**
 * Forgets up to 20 sessions whose time is past ARGV[1] with their codes and tokens. Run before every create, so that
 * the store holds only live sessions and what is swept stays bounded per call.
 */
const SWEEP = `
local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[4], '-inf', now, 'LIMIT', 0, 20)
  for _, id in ipairs(gone) do
    local code = redis.call('HGET', KEYS[1], id .. ':c')
    local token = redis.call('HGET', KEYS[1], id .. ':t')
    if code then redis.call('HDEL', KEYS[2], code) end
    if token then redis.call('HDEL', KEYS[3], token) end
    redis.call('HDEL', KEYS[1], id, id .. ':c', id .. ':ce', id .. ':t', id .. ':te', id .. ':r')
    redis.call('ZREM', KEYS[4], id)
  end
end
`

/** ARGV: id, json, code hash, code expiry, now. */
export const CREATE_SESSION_SCRIPT = `${SWEEP}
sweep(ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2], ARGV[1] .. ':c', ARGV[3], ARGV[1] .. ':ce', ARGV[4])
redis.call('HSET', KEYS[2], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[1])
return 1
`

/**
 * ARGV: code hash, token hash, now, token expiry. The code is spent whatever follows (HDEL: one caller takes it).
 * Returns the session's json when exchanged, false otherwise.
 */
export const EXCHANGE_CODE_SCRIPT = `
local id = redis.call('HGET', KEYS[2], ARGV[1])
if not id then return false end
redis.call('HDEL', KEYS[2], ARGV[1])
local json = redis.call('HGET', KEYS[1], id)
if not json then return false end
if redis.call('HEXISTS', KEYS[1], id .. ':r') == 1 or redis.call('HEXISTS', KEYS[1], id .. ':t') == 1 then
  return false
end
local codeExpires = tonumber(redis.call('HGET', KEYS[1], id .. ':ce'))
if codeExpires == nil or tonumber(ARGV[3]) >= codeExpires then return false end
redis.call('HSET', KEYS[1], id .. ':t', ARGV[2], id .. ':te', ARGV[4])
redis.call('HSET', KEYS[3], ARGV[2], id)
redis.call('ZADD', KEYS[4], ARGV[4], id)
return json
`

/** ARGV: token hash. Returns [json, token hash, token expiry, revoked] of the session the token names, or false. */
export const SESSION_OF_TOKEN_SCRIPT = `
local id = redis.call('HGET', KEYS[3], ARGV[1])
if not id then return false end
local json = redis.call('HGET', KEYS[1], id)
if not json then return false end
return { json, redis.call('HGET', KEYS[1], id .. ':t') or '', redis.call('HGET', KEYS[1], id .. ':te') or '',
  redis.call('HGET', KEYS[1], id .. ':r') or '' }
`

/** When the session ARGV[1] is forgotten: its token's expiry, or its code's if never exchanged. */
const FORGOTTEN_AT = `
local function forgottenAt()
  return tonumber(redis.call('HGET', KEYS[1], ARGV[1] .. ':te') or redis.call('HGET', KEYS[1], ARGV[1] .. ':ce') or 0)
end
`

/** ARGV: id, now. Returns [json, token expiry, revoked] of a session not yet forgotten, or false. */
export const GET_SESSION_SCRIPT = `${FORGOTTEN_AT}
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json or tonumber(ARGV[2]) >= forgottenAt() then return false end
return { json, redis.call('HGET', KEYS[1], ARGV[1] .. ':te') or '', redis.call('HGET', KEYS[1], ARGV[1] .. ':r') or '' }
`

/**
 * ARGV: id, now. Marks a session not yet forgotten revoked (kept until its time, so that it still reads as revoked)
 * and forgets its code and token. Returns [json, token expiry, revoked] as they were, or false.
 */
export const REVOKE_SESSION_SCRIPT = `${FORGOTTEN_AT}
local json = redis.call('HGET', KEYS[1], ARGV[1])
if not json or tonumber(ARGV[2]) >= forgottenAt() then return false end
local tokenExpires = redis.call('HGET', KEYS[1], ARGV[1] .. ':te') or ''
local revoked = redis.call('HGET', KEYS[1], ARGV[1] .. ':r') or ''
if revoked == '' then redis.call('HSET', KEYS[1], ARGV[1] .. ':r', ARGV[2]) end
local code = redis.call('HGET', KEYS[1], ARGV[1] .. ':c')
local token = redis.call('HGET', KEYS[1], ARGV[1] .. ':t')
if code then redis.call('HDEL', KEYS[2], code) end
if token then redis.call('HDEL', KEYS[3], token) end
return { json, tokenExpires, revoked }
`

type Arg = string | number

export interface PortalSessionScripts {
  portalCreateSession(sessions: string, codes: string, tokens: string, expiry: string, ...args: Arg[]): Promise<number>
  portalExchangeCode(
    sessions: string,
    codes: string,
    tokens: string,
    expiry: string,
    ...args: Arg[]
  ): Promise<string | null>
  portalSessionOfToken(
    sessions: string,
    codes: string,
    tokens: string,
    expiry: string,
    token: string,
  ): Promise<string[] | null>
  portalGetSession(
    sessions: string,
    codes: string,
    tokens: string,
    expiry: string,
    ...args: Arg[]
  ): Promise<string[] | null>
  portalRevokeSession(
    sessions: string,
    codes: string,
    tokens: string,
    expiry: string,
    ...args: Arg[]
  ): Promise<string[] | null>
}

const SCRIPTS: [keyof PortalSessionScripts, string][] = [
  ['portalCreateSession', CREATE_SESSION_SCRIPT],
  ['portalExchangeCode', EXCHANGE_CODE_SCRIPT],
  ['portalSessionOfToken', SESSION_OF_TOKEN_SCRIPT],
  ['portalGetSession', GET_SESSION_SCRIPT],
  ['portalRevokeSession', REVOKE_SESSION_SCRIPT],
]

/** Defines the scripts on `redis` (EVALSHA, loaded on first use) and answers it typed with them. */
export function definePortalSessionScripts(redis: RedisClient): Redis & PortalSessionScripts {
  for (const [name, lua] of SCRIPTS) redis.defineCommand(name, { numberOfKeys: 4, lua })
  return redis as unknown as Redis & PortalSessionScripts
}
