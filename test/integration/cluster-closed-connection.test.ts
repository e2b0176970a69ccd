import type { Cluster, Redis } from 'ioredis'
import { describe, expect, it } from 'vitest'
import { createRedis, SCRIPTS_WITH_KEY_COUNT } from '../../shared/store/redis/redis-connection.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'

/** Runs for this long after its write, ms: long enough to close the connection while Redis runs it. */
const BUSY_MS = 400

/** An INCR that takes BUSY_MS to answer: it has run by the time its reply is lost. */
const SLOW_INCR = `
redis.call('INCR', KEYS[1])
local started = redis.call('TIME')
local now = started
while (now[1] - started[1]) * 1000000 + (now[2] - started[2]) < ${BUSY_MS * 1000} do now = redis.call('TIME') end
return 1`

type Scripted = Cluster & Record<string, (keys: number, key: string) => Promise<number>>

/**
 * A Cluster's node connection that closes (a reset, a node restarted, a proxy or load balancer dropping it) while a
 * command awaits its reply: the command may have run, only its reply was lost. ioredis answers such a command
 * "Connection is closed." and sends it again, after its failover delay, on the node's next connection: a write run
 * twice, the second time after nobody asked for it (a credit spent twice, a usage counted twice, a create answered
 * "exists" after it succeeded). Keygate fails it instead (503: outcome unknown), as on one server.
 */
describe('a Cluster node connection that closes while a write awaits its reply', () => {
  const stoppable = stopAfterAll()

  // A script sent on its own (SCRIPTS_WITH_KEY_COUNT, as the counter store's consumeRateLimits), and one
  // auto-pipelined (as every other store script): ioredis sends a lone command again, and a pipeline whose commands
  // all met the close.
  it.each([
    ['sent on its own', 'consumeRateLimits'],
    ['auto-pipelined', 'slowIncr'],
  ])(
    'fails a write %s, and never sends it again',
    async (_, script) => {
      expect(SCRIPTS_WITH_KEY_COUNT.includes(script)).toBe(script === 'consumeRateLimits')
      const nodes = await startRedisCluster(stoppable.stopped)
      const cluster = createRedis(
        'redis://127.0.0.1:6379',
        'closed',
        {},
        { cluster: nodes.map((node) => ({ host: '127.0.0.1', port: node.port })) },
      ) as Scripted
      stoppable.push({ stop: async () => cluster.disconnect() })
      cluster.defineCommand(script, { lua: SLOW_INCR })
      await waitFor(async () => cluster.status === 'ready', 'the Cluster ready', 10_000, 20)
      expect(await cluster.set('counted', '0')).toBe('OK')

      const slot = (await nodes[0]!.admin.call('CLUSTER', 'KEYSLOT', 'counted')) as number
      const ranges = (await nodes[0]!.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
      const owner = ranges.find(([from, to]) => from <= slot && slot <= to)![2][1]
      const connection = cluster.nodes('master').find((node: Redis) => node.options.port === owner)!
      expect(connection.status).toBe('ready')

      const written = connection.stream.bytesWritten
      const outcome = cluster[script]!(1, 'counted').then(
        () => 'answered',
        (err: Error) => `failed: ${err.message}`,
      )
      // The script has left for Redis (nothing of it still held in this process), which runs it, INCR first, while
      // the connection closes before its reply can come.
      await waitFor(
        () => connection.stream.bytesWritten > written && connection.stream.writableLength === 0,
        'the script sent',
      )
      connection.stream.destroy()

      expect(await outcome).toMatch(/^failed: /)
      // What must not happen past ioredis' failover delay (100 ms) and another run of the script: the script sent
      // again.
      await nothingHappensFor(BUSY_MS + 600)
      expect(await cluster.get('counted')).toBe('1')
    },
    40_000,
  )
})
