import { readFileSync } from 'node:fs'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoalescingRedis } from '../../shared/store/coalescing-redis.js'
import { connectionOptions, openRedis } from '../../shared/store/redis-connection.js'
import { useRedisServer } from '../support/redis-server.js'

/** This process's write system calls so far (all its threads), as the kernel counts them. */
const writeCalls = () => Number(/^syscw:\s*(\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))?.[1])

const COMMANDS = 200

/** The write system calls made while `COMMANDS` GETs are sent in one turn and answered, and their replies. */
async function writesForOneTurn(redis: Redis): Promise<{ writes: number; replies: (string | null)[] }> {
  await redis.ping()
  const before = writeCalls()
  const replies = await Promise.all(Array.from({ length: COMMANDS }, (_, i) => redis.get(`coalesce:${i}`)))
  return { writes: writeCalls() - before, replies }
}

describe('CoalescingRedis', () => {
  const server = useRedisServer()
  const opened: Redis[] = []
  afterEach(() => {
    for (const redis of opened.splice(0)) redis.disconnect()
  })
  const open = async (connect: () => Promise<Redis> | Redis) => {
    const redis = await connect()
    opened.push(redis)
    if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
    return redis
  }

  it("sends one turn's commands in one write, each with its own reply in order (plain ioredis: a write each)", async () => {
    await server.admin.mset(...Array.from({ length: COMMANDS }, (_, i) => [`coalesce:${i}`, `v${i}`]).flat())
    const expected = Array.from({ length: COMMANDS }, (_, i) => `v${i}`)

    // The control: the same options without coalescing write once per command, so the count sees writes.
    const plain = await open(() => new Redis(server.url, { ...connectionOptions('plain'), lazyConnect: false }))
    const uncoalesced = await writesForOneTurn(plain)
    expect(uncoalesced.replies).toEqual(expected)
    expect(uncoalesced.writes).toBeGreaterThanOrEqual(COMMANDS)

    const coalescing = await open(() => openRedis(server.url, 'coalescing'))
    expect(coalescing).toBeInstanceOf(CoalescingRedis)
    const coalesced = await writesForOneTurn(coalescing)
    expect(coalesced.replies).toEqual(expected)
    // One write for the turn (a few more allowed for whatever else the process writes meanwhile).
    expect(coalesced.writes).toBeLessThanOrEqual(5)
  })

  it('sends the next turn’s commands too (the socket is uncorked after each turn), and survives a reconnect', async () => {
    const redis = await open(() => openRedis(server.url, 'turns'))
    for (let turn = 0; turn < 5; turn++) expect(await redis.set(`turn:${turn}`, String(turn))).toBe('OK')
    expect(await redis.mget('turn:0', 'turn:4')).toEqual(['0', '4'])

    // A connection killed from the server side: ioredis reconnects, and commands go out on the new socket.
    const id = (await redis.call('CLIENT', 'ID')) as number
    await server.admin.call('CLIENT', 'KILL', 'ID', String(id))
    await new Promise((resolve) => redis.once('ready', resolve))
    expect(await Promise.all([redis.get('turn:1'), redis.get('turn:2')])).toEqual(['1', '2'])
  })
})
