import type { Cluster } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { createRedis } from '../../shared/store/redis/redis-connection.js'
import { replicaWait } from '../../shared/store/redis/redis-replica-wait.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import type { RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

/**
 * REDIS_WAIT_REPLICAS on a Cluster: a write is acknowledged only once a replica of the master that took it has it.
 * WAIT confirms the writes of the connection it is sent on: sent through the Cluster it would reach any node.
 */
/**
 * Until `afterWrite` is acknowledged: a replica just attached confirms its first writes late (its first ack comes with
 * its once-a-second cron, up to a second after the Cluster is up), beyond the short WAITs these tests send.
 */
const confirmed = (afterWrite: () => Promise<void>, what: string) =>
  waitFor(
    async () =>
      afterWrite().then(
        () => true,
        () => false,
      ),
    what,
    5_000,
    50,
  )

describe('waiting for replicas on a Cluster', () => {
  const nodes: RedisServer[] = []
  afterAll(async () => {
    for (const node of nodes) node.signal('SIGCONT')
    await Promise.all(nodes.map((node) => node.stop()))
  })

  /** A Cluster of three masters with a replica each, a client of it named `name`, and its wait for one replica. */
  async function clusterWaitingForOneReplica(name: string) {
    const started = await startRedisCluster(
      (starting) =>
        starting.then((node) => {
          nodes.push(node)
          return node
        }),
      { replicas: 1 },
    )
    const masters = started.slice(0, 3)
    const cluster = createRedis(
      'redis://127.0.0.1:6379',
      name,
      {},
      { cluster: masters.map((node) => ({ host: '127.0.0.1', port: node.port })) },
    ) as Cluster
    nodes.push({ stop: async () => cluster.disconnect(), signal: () => {} } as unknown as RedisServer)
    await waitFor(async () => cluster.status === 'ready', 'the Cluster ready', 10_000, 20)
    return { started, masters, cluster, afterWrite: replicaWait(cluster, { waitReplicas: 1, timeoutMs: 300 }) }
  }

  it("refuses to acknowledge a write whose master's replica has not confirmed it", async () => {
    const { started, masters, cluster, afterWrite } = await clusterWaitingForOneReplica('replica-wait')

    await cluster.set('waited', 'first')
    await confirmed(afterWrite, 'the replicas to confirm')

    // The replica of the master holding the key stops: that master's writes go unconfirmed.
    const slot = (await masters[0]!.admin.call('CLUSTER', 'KEYSLOT', 'waited')) as number
    const ranges = (await masters[0]!.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
    const [, , [, masterPort]] = ranges.find(([from, to]) => from <= slot && slot <= to)!
    const master = started.find((node) => node.port === masterPort)!
    const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(await master.admin.info('replication'))![1])
    const replica = started.find((node) => node.port === replicaPort)!
    replica.signal('SIGSTOP')
    for (let i = 0; i < 5; i++) {
      await cluster.set('waited', `unconfirmed ${i}`)
      await expect(afterWrite()).rejects.toBeInstanceOf(StoreUnavailableError)
    }
    replica.signal('SIGCONT')
    await confirmed(afterWrite, 'the replica to confirm again')
  }, 60_000)

  it('answers 503, never 500, while a master a manual failover demoted is still taken for one', async () => {
    const { started, masters, cluster, afterWrite } = await clusterWaitingForOneReplica('manual-failover')

    // The writes go to a key another master holds: nothing they do tells the Cluster client of the failover.
    const demoted = masters[0]!
    const ranges = (await demoted.admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][]
    const ownerOf = async (key: string) => {
      const slot = (await demoted.admin.call('CLUSTER', 'KEYSLOT', key)) as number
      return ranges.find(([from, to]) => from <= slot && slot <= to)![2][1]
    }
    let key = 'elsewhere-0'
    for (let i = 1; (await ownerOf(key)) === demoted.port; i++) key = `elsewhere-${i}`
    await cluster.set(key, 'before')
    await confirmed(afterWrite, 'the replicas to confirm')

    // Its replica takes over at the operator's word, as for a rolling upgrade: the old master, alive, becomes its
    // replica and keeps its clients' connections. (TAKEOVER: a plain CLUSTER FAILOVER ends the same way, but its
    // election often stalls on a Cluster just created.)
    const replicaPort = Number(/slave0:ip=[^,]+,port=(\d+)/.exec(await demoted.admin.info('replication'))![1])
    const replica = started.find((node) => node.port === replicaPort)!
    await replica.admin.call('CLUSTER', 'FAILOVER', 'TAKEOVER')
    await waitFor(
      async () => ((await demoted.admin.call('ROLE')) as [string])[0] === 'slave',
      'the old master to become a replica',
      10_000,
      50,
    )
    // Every write answers 503 (retry) until its WAITs are confirmed again, never an error of another kind.
    const outcomes: string[] = []
    await waitFor(
      async () => {
        await cluster.set(key, 'after')
        const outcome = await afterWrite().then(
          () => 'acknowledged',
          (err: unknown) => (err instanceof StoreUnavailableError ? '503' : `unexpected: ${String(err)}`),
        )
        outcomes.push(outcome)
        return outcome !== '503'
      },
      'a write acknowledged after the failover',
      10_000,
      50,
    )
    expect(outcomes.filter((outcome) => outcome.startsWith('unexpected'))).toEqual([])
    expect(outcomes.at(-1)).toBe('acknowledged')
  }, 60_000)
})
