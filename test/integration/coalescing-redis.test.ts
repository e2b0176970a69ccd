import { readFileSync } from 'node:fs'
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { Redis } from 'ioredis'
import { CoalescingRedis } from '../../shared/store/redis/coalescing-redis.js'
import { connectionOptions, openRedis } from '../../shared/store/redis/redis-connection.js'
import { startRedisServer, useRedisServer, type RedisServer } from '../support/redis-server.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'

/**
 * When a plain timer set at `started` for `ms` actually ran, in ms after `started`: a deadline as this process keeps it
 * at the moment (a loaded machine runs every timer late alike), against which a timeout is judged on time or late.
 */
function firedAfter(started: number, ms: number): Promise<number> {
  return new Promise((resolve) =>
    setTimeout(() => resolve(performance.now() - started), ms - (performance.now() - started)),
  )
}

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
  /** Servers of a test's own: one paused for longer than the test needs it is killed, not waited out. */
  const own: RedisServer[] = []
  afterEach(async () => {
    for (const redis of opened.splice(0)) redis.disconnect()
    await Promise.all(own.splice(0).map((paused) => paused.stop()))
  })
  const ownServer = async () => {
    const started = await startRedisServer()
    own.push(started)
    return started
  }
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

  it('rejects a command Redis has not answered within commandTimeout, ends the connection, and goes on after', async () => {
    const timeoutMs = 300
    const redis = await open(() => openRedis(server.url, 'timed', { commandTimeout: timeoutMs }))
    expect(await redis.set('timed', 'before')).toBe('OK')
    let stranded = 0
    redis.on('stranded', () => stranded++)
    // Redis takes no command from anyone for 800 ms (this one's reply comes first).
    await server.admin.call('CLIENT', 'PAUSE', '800', 'ALL')
    const started = performance.now()
    const rejectedAfter = (command: Promise<unknown>) =>
      command.then(
        () => ({ message: 'answered', ms: Number.NaN }),
        (err: Error) => ({ message: err.message, ms: performance.now() - started }),
      )
    const first = rejectedAfter(redis.get('timed'))
    // A plain timer set for the deadline: what "on time" is on this machine now (a loaded one runs every timer late).
    const firstDeadline = firedAfter(started, timeoutMs)
    // Half-way through the first's timeout, with nothing answered (Redis is paused: it times out at its deadline, not
    // before, as asserted below), the second is sent.
    await nothingHappensFor(150)
    const second = rejectedAfter(redis.get('timed'))
    const [firstAnswer, secondAnswer] = await Promise.all([first, second])
    // The first at its deadline, not before it (a watchdog step is 15 ms here).
    expect(firstAnswer.message).toBe('Command timed out')
    expect(firstAnswer.ms).toBeGreaterThanOrEqual(timeoutMs - 1)
    expect(firstAnswer.ms).toBeLessThan((await firstDeadline) + 120)
    // A reply that long overdue means the path is dead or Redis is stuck: the connection ends, and what else awaited a
    // reply on it fails with it at once, rather than at its own deadline (or being sent again on the next connection).
    expect(secondAnswer.message).toMatch(/^Connection stranded/)
    expect(secondAnswer.ms).toBeLessThan(firstAnswer.ms + 60)
    expect(stranded).toBe(1)
    // Once Redis answers again (the admin connection's command waits out the pause too), the new connection serves new
    // commands.
    await server.admin.ping()
    await waitFor(async () => redis.status === 'ready', 'the new connection', 3_000, 20)
    expect(await redis.mget('timed', 'nothing')).toEqual(['before', null])
    expect(await redis.set('timed', 'after')).toBe('OK')
    expect(await redis.get('timed')).toBe('after')
  })

  it('never times out a command Redis answers in time, however long the connection is busy', async () => {
    const redis = await open(() => openRedis(server.url, 'busy', { commandTimeout: 200 }))
    // Commands sent one after another for three times the timeout, each answered at once.
    const until = performance.now() + 600
    let sent = 0
    while (performance.now() < until) {
      await Promise.all([redis.incr('busy'), redis.get('busy')])
      sent += 2
      // Gaps with nothing in flight between the commands: no time-out comes of them either.
      await nothingHappensFor(5)
    }
    expect(sent).toBeGreaterThan(20)
    expect(Number(await redis.get('busy'))).toBe(sent / 2)
  })

  it('times out a command sent after the watchdog found nothing left to watch and slept', async () => {
    const paused = await ownServer()
    const redis = await open(() => openRedis(paused.url, 'idle', { commandTimeout: 200 }))
    expect(await redis.set('idle', '1')).toBe('OK')
    // Longer than the timeout, with no command: the watchdog fires, finds nothing waiting, and sleeps until the next.
    await nothingHappensFor(400)
    await paused.admin.call('CLIENT', 'PAUSE', '600', 'ALL')
    const started = performance.now()
    const deadline = firedAfter(started, 200)
    const outcome = await redis.get('idle').then(
      () => 'answered',
      (err: Error) => err.message,
    )
    expect(outcome).toBe('Command timed out')
    expect(performance.now() - started).toBeLessThan((await deadline) + 100)
  })

  it('never sends a command again on the next connection: one that ran before its connection dropped runs once', async () => {
    // A path to Redis that loses the replies (they never reach the client) until the connection is cut.
    const clients = new Set<Socket>()
    let repliesLost = false
    const proxy = createServer((client) => {
      clients.add(client)
      const upstream = createConnection({ host: '127.0.0.1', port: server.port })
      client.on('data', (chunk) => upstream.write(chunk))
      upstream.on('data', (chunk) => repliesLost || client.write(chunk))
      const end = () => {
        clients.delete(client)
        client.destroy()
        upstream.destroy()
      }
      for (const socket of [client, upstream]) socket.on('close', end).on('error', () => {})
    })
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = proxy.address() as AddressInfo
      const redis = await open(() => openRedis(`redis://127.0.0.1:${port}`, 'once'))
      repliesLost = true
      const incremented = redis.incr('once').then(
        (value) => `answered ${value}`,
        (err: Error) => err.message,
      )
      await waitFor(async () => (await server.admin.get('once')) === '1', 'the INCR to run', 2_000, 10)
      for (const client of clients) client.destroy()
      repliesLost = false
      // ioredis would send the INCR again once reconnected, and answer 2: the increment applied twice.
      expect(await incremented).toMatch(/^Connection closed before Redis answered/)
      await waitFor(async () => redis.status === 'ready', 'the new connection', 3_000, 20)
      expect(await redis.get('once')).toBe('1')
    } finally {
      proxy.close()
    }
  })

  describe('a command pending when the connection drops, while the reconnect hangs (Redis paused)', () => {
    const settledWithin = (command: Promise<unknown>, ms: number) =>
      Promise.race([
        command.then(
          () => 'resolved',
          (err: Error) => err.message,
        ),
        nothingHappensFor(ms).then(() => 'pending'),
      ])
    /**
     * A GET pending on a connection that is cut and reconnects to a Redis that takes no command for 2.5 s (a server of
     * the test's own: CLIENT UNPAUSE would wait for the pause to end like any other command).
     */
    async function pendingAcrossReconnect() {
      const paused = await ownServer()
      const redis = await open(() => openRedis(paused.url, 'resend', { commandTimeout: 300 }))
      await paused.admin.call('CLIENT', 'PAUSE', '2500', 'ALL')
      const written = redis.stream.bytesWritten
      const pending = redis.get('resend')
      pending.catch(() => {})
      await waitFor(() => redis.stream.bytesWritten > written && redis.stream.writableLength === 0, 'the GET sent')
      // A network reset: the GET, unanswered, fails; ioredis reconnects, and its handshake waits on the pause.
      redis.stream.destroy()
      await new Promise((resolve) => redis.once('connect', resolve))
      return { redis, pending }
    }

    it('rejects it at once: it may have run, and is never sent again', async () => {
      const { pending } = await pendingAcrossReconnect()
      expect(await settledWithin(pending, 50)).toMatch(/^Connection closed before Redis answered/)
    })

    it('settles it when the connection is closed meanwhile', async () => {
      const { redis, pending } = await pendingAcrossReconnect()
      redis.disconnect()
      expect(await settledWithin(pending, 1_000)).not.toBe('pending')
    })
  })
})
