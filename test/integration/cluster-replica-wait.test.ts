import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors.js'
import { connectRedis } from '../../shared/store/redis-connection.js'
import { redisKeys } from '../../shared/store/redis-keys.js'
import { createRedisStore } from '../../shared/store/redis-store.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { stopAfterAll } from '../support/stop-after-all.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * REDIS_WAIT_REPLICAS on a Cluster: WAIT counts the replicas of the node it runs on, so it must run on the master that
 * took the write. Sent as a keyless command, a Cluster client runs it on any master: one whose replicas are well
 * confirmed a write the replica of another master never got.
 */
describe('waiting for replicas on a Redis Cluster', () => {
  const stoppable = stopAfterAll()

  it("acknowledges a write only once a replica of the master that took it has it, not another master's", async () => {
    const nodes = await startRedisCluster(stoppable.stopped, 1)
    await waitFor(
      async () => {
        const replication = await Promise.all(nodes.map((node) => node.admin.info('replication')))
        return replication.filter((info) => /slave0:.*state=online/.test(info)).length === 3
      },
      'three replicas in sync',
      20_000,
      200,
    )
    const seeds = nodes.map((node) => ({ host: '127.0.0.1', port: node.port }))
    const plain = createRedisStore(await connectRedis('redis://127.0.0.1:6379', 'plain', { cluster: seeds }))
    const store = createRedisStore(await connectRedis('redis://127.0.0.1:6379', 'waiting', { cluster: seeds }), {
      replication: { waitReplicas: 1, timeoutMs: 300 },
    })
    stoppable.push({ stop: () => Promise.all([store.close(), plain.close()]) })
    const api = await newApi(plain)

    // One master's replica stops taking anything (its link stays up, so it still counts as attached).
    const lines = ((await nodes[0]!.admin.call('CLUSTER', 'NODES')) as string).split('\n')
    const replicaLine = lines.find((line) => line.includes(' slave '))!
    const masterLine = lines.find((line) => line.startsWith(`${replicaLine.split(' ')[3]} `))!
    const replica = nodes.find((node) => replicaLine.includes(`:${node.port}@`))!
    /** Whether the master whose replica is stopped serves `key`'s slot. */
    const onThatMaster = async (key: string) => {
      const slot = (await nodes[0]!.admin.call('CLUSTER', 'KEYSLOT', key)) as number
      return masterLine
        .split(' ')
        .slice(8)
        .some((range) => {
          const [from, to = from] = range.split('-').map(Number)
          return slot >= from! && slot <= to!
        })
    }
    const replicaPid = Number(/process_id:(\d+)/.exec(await replica.admin.info('server'))?.[1])
    process.kill(replicaPid, 'SIGSTOP')
    try {
      let onStopped = 0
      for (let i = 0; i < 12; i++) {
        const input = newKey(api.id)
        const outcome = await store.keys.createKey(input).then(
          () => 'acknowledged',
          (err: unknown) => (err instanceof StoreUnavailableError ? 'unconfirmed' : String(err)),
        )
        const there = await onThatMaster(redisKeys.record(input.hash))
        if (there) onStopped++
        expect(
          outcome,
          `a write to ${there ? 'the master whose replica is stopped' : 'a master with its replica'}`,
        ).toBe(there ? 'unconfirmed' : 'acknowledged')
      }
      expect(onStopped).toBeGreaterThan(0)
    } finally {
      process.kill(replicaPid, 'SIGCONT')
    }
  }, 90_000)
})
