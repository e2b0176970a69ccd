import { afterEach, describe, expect, it } from 'vitest'
import type { Cluster, Redis } from 'ioredis'
import { createRedis, toStoreError, type RedisTarget } from '../../shared/store/redis/redis-connection.js'
import { storeCall } from '../../shared/store/redis/redis-store-call.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'

// The options ioredis is given, read back from the client: lazyConnect, so nothing connects (no TLS server needed).
const sentinel = {
  sentinels: [
    { host: '10.0.0.1', port: 26379 },
    { host: '10.0.0.2', port: 26379 },
  ],
  name: 'mymaster',
}
const cluster = [
  { host: '10.0.0.1', port: 6379 },
  { host: '10.0.0.2', port: 6379 },
]

const opened: (Redis | Cluster)[] = []
function open<T extends Redis | Cluster>(url: string, target?: RedisTarget): T {
  const redis = createRedis(url, 'options-test', { lazyConnect: true }, target)
  opened.push(redis)
  return redis as T
}
afterEach(() => {
  for (const redis of opened.splice(0)) redis.disconnect()
})

describe('Redis connection options from REDIS_URL', () => {
  it('rediss:// with REDIS_SENTINELS: TLS to the master and replicas (which ioredis only does with enableTLSForSentinelMode) and to the sentinels', () => {
    const { options } = open<Redis>('rediss://app:s%3Acret@redis.example:6380/2', { sentinel })
    expect(options).toMatchObject({
      tls: {},
      enableTLSForSentinelMode: true,
      sentinelTLS: {},
      name: 'mymaster',
      username: 'app',
      password: 's:cret',
      db: 2,
    })
  })

  it('redis:// with REDIS_SENTINELS: no TLS anywhere', () => {
    const { options } = open<Redis>('redis://app:secret@redis.example:6379/2', { sentinel })
    expect(options.tls).toBeUndefined()
    expect(options.enableTLSForSentinelMode).toBe(false)
    expect(options.sentinelTLS).toBeUndefined()
    expect(options).toMatchObject({ username: 'app', password: 'secret', db: 2 })
  })

  it('rediss:// with REDIS_CLUSTER_NODES: TLS to every node', () => {
    const { options } = open<Cluster>('rediss://:secret@redis.example:6380', { cluster })
    expect(options.redisOptions).toMatchObject({ tls: {}, password: 'secret' })
  })

  it('redis:// with REDIS_CLUSTER_NODES: no TLS', () => {
    const { options } = open<Cluster>('redis://:secret@redis.example:6379', { cluster })
    expect(options.redisOptions?.tls).toBeUndefined()
    expect(options.redisOptions).toMatchObject({ password: 'secret' })
  })

  it('one server at REDIS_URL: TLS for rediss:// as ioredis reads the URL, none for redis://', () => {
    expect(open<Redis>('rediss://redis.example:6380').options.tls).toBeTruthy()
    expect(open<Redis>('redis://redis.example:6379').options.tls).toBeUndefined()
  })
})

describe('errors from Redis', () => {
  const failed = (name: string, message: string) =>
    Object.assign(new Error(message), {
      name,
      command: { name: 'evalsha', args: ['sha', '3', 'kg:{s1}:e:rootkey:SECRETHASH', 'doc'] },
    })

  it('keep the failed command’s name and none of its arguments (hashes, addresses), whatever they become', () => {
    const reply = failed('ReplyError', 'ERR script failed')
    expect(toStoreError(reply)).toBe(reply)
    expect(reply.command).toEqual({ name: 'evalsha' })
    const down = failed('ReplyError', 'LOADING Redis is loading')
    const mapped = toStoreError(down)
    expect(mapped).toBeInstanceOf(StoreUnavailableError)
    expect(JSON.stringify((mapped as Error).cause)).not.toContain('SECRETHASH')
    expect(down.command).toEqual({ name: 'evalsha' })
  })

  it('a reshard redirection is a brief outage (503), never a bug (500)', () => {
    for (const message of ['MOVED 3999 127.0.0.1:6381', 'ASK 3999 127.0.0.1:6381', 'TRYAGAIN Multiple keys request'])
      expect(toStoreError(failed('ReplyError', message))).toBeInstanceOf(StoreUnavailableError)
  })

  it('a WAIT a failover cut short is a 503: the write may or may not be kept', () => {
    const message = 'UNBLOCKED force unblock from blocking operation, instance state changed (master -> replica?)'
    expect(toStoreError(failed('ReplyError', message))).toBeInstanceOf(StoreUnavailableError)
  })

  it('a WAIT sent to a master demoted a moment ago is a 503, other ERR replies stay bugs (500)', () => {
    const demoted = 'ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 …'
    expect(toStoreError(failed('ReplyError', demoted))).toBeInstanceOf(StoreUnavailableError)
    expect(toStoreError(failed('ReplyError', 'ERR wrong number of arguments'))).not.toBeInstanceOf(
      StoreUnavailableError,
    )
  })

  it('storeCall tries a redirected operation again, and gives up as a 503 after three more tries', async () => {
    let calls = 0
    const movedTwice = () => {
      calls++
      return calls <= 2 ? Promise.reject(failed('ReplyError', 'MOVED 1 127.0.0.1:1')) : Promise.resolve('done')
    }
    expect(await storeCall(movedTwice)).toBe('done')
    expect(calls).toBe(3)
    calls = 0
    const alwaysAsk = () => {
      calls++
      return Promise.reject(failed('ReplyError', 'ASK 1 127.0.0.1:1'))
    }
    await expect(storeCall(alwaysAsk)).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(calls).toBe(4)
    calls = 0
    const bug = () => {
      calls++
      return Promise.reject(failed('ReplyError', 'ERR unknown command'))
    }
    await expect(storeCall(bug)).rejects.not.toBeInstanceOf(StoreUnavailableError)
    expect(calls).toBe(1)
  })
})
