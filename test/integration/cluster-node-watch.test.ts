import type { Cluster } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { createRedis, SCRIPTS_WITH_KEY_COUNT } from '../../shared/store/redis/redis-connection.js'
import { startClusterBehindProxies } from '../support/redis-cluster.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'

const TIMEOUT_MS = 500

/**
 * A Cluster's node connection stranded (a proxy before the node stops passing bytes, telling neither end): the
 * heartbeat finds it dead and ends it, the Cluster connects anew — and a write that timed out on a stranded
 * connection is never sent again on the new one, where it would run after its caller was told it failed.
 */
describe('a Cluster whose node connection stops answering', () => {
  const stoppable: { stop(): Promise<unknown> }[] = []
  afterAll(async () => {
    await Promise.all(stoppable.reverse().map((s) => s.stop()))
  })

  it('ends it, connects anew, and never re-sends a write that timed out', async () => {
    const { nodes, paths, ports } = await startClusterBehindProxies((started) => stoppable.push(started))
    const cluster = createRedis(
      'redis://127.0.0.1:6379',
      'watched',
      { commandTimeout: TIMEOUT_MS },
      { cluster: ports.map((port) => ({ host: '127.0.0.1', port })) },
    ) as Cluster & { consumeRateLimits(keys: number, key: string): Promise<number> }
    stoppable.push({ stop: async () => cluster.disconnect() })
    // A stand-in for the counter store's script of that name: only its name matters here, which ioredis sends on its
    // own.
    expect(SCRIPTS_WITH_KEY_COUNT).toContain('consumeRateLimits')
    cluster.defineCommand('consumeRateLimits', { lua: "return redis.call('INCR', KEYS[1])" })
    let stranded = 0
    cluster.on('stranded', () => stranded++)
    await waitFor(async () => cluster.status === 'ready', 'the Cluster ready', 10_000, 20)
    expect(await cluster.incr('counted')).toBe(1)

    // Only the path to the node holding the key dies: the Cluster stays up through the others, and ioredis would send
    // a command that met its connection's end again through them.
    const slot = (await nodes[0]!.admin.call('CLUSTER', 'KEYSLOT', 'counted')) as number
    const ranges = (await nodes[0]!.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
    const owner = ranges.find(([from, to]) => from <= slot && slot <= to)![2][1]
    paths[ports.indexOf(owner)]!.strand()
    const strandedAt = Date.now()
    // Sent on its own, not auto-pipelined, as Keygate's scripts that take their keys' count are
    // (SCRIPTS_WITH_KEY_COUNT): a lone command is what ioredis sends again when its connection ends ("Connection is
    // closed"), a pipeline's not.
    await expect(cluster.consumeRateLimits(1, 'counted')).rejects.toThrow('Command timed out')
    // Within a heartbeat and a timeout the stranded connection is ended, and a new one serves.
    const answered = await waitFor(
      async () => {
        try {
          return await cluster.get('counted')
        } catch {
          return undefined
        }
      },
      'an answer on a new connection',
      10_000,
      100,
    )
    console.log(`stranded cluster connections: answering again ${Date.now() - strandedAt} ms after the fault`)
    expect(stranded).toBe(1)
    // The timed-out INCR never ran: its bytes died on the stranded path, and it was not sent again.
    expect(answered).toBe('1')
    // What must not happen on the new connection: the timed-out INCR sent again.
    await nothingHappensFor(300)
    expect(await cluster.get('counted')).toBe('1')
  }, 40_000)
})
