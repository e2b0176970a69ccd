import { afterAll, describe, expect, it } from 'vitest'
import { createMetricsRegistry } from '../../shared/http/metrics-registry.js'
import { createRedis } from '../../shared/store/redis/redis-connection.js'
import { startTestControlPlane, startTestVerifier, type TestServer } from '../support/apps.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startRedisCluster } from '../support/redis-cluster.js'

const servers: TestServer[] = []
let redis: RedisServer | undefined
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()))
  await redis?.stop()
})

/** The value of one sample of GET /metrics whose name and labels contain every `labels` pair (undefined if none). */
async function sample(
  server: TestServer,
  name: string,
  labels: Record<string, string> = {},
): Promise<number | undefined> {
  const text = (await server.app.inject({ method: 'GET', url: '/metrics' })).body
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`)
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const present = (match[2] ?? '').split(',')
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3])
  }
  return undefined
}

const readyz = async (server: TestServer) => (await server.app.inject({ method: 'GET', url: '/readyz' })).statusCode

describe('operational metrics on a real Redis', () => {
  it('keygate_ready follows /readyz, keygate_redis_errors_total counts connection errors while Redis is gone, keygate_max_staleness_seconds is the bound', async () => {
    redis = await startRedisServer()
    const port = redis.port
    // Short bound and poll so the verifier's own staleness turns readiness off too, not only the store ping.
    const sync = { maxStalenessMs: 1_000, pollIntervalMs: 250 }
    const controlPlane = await startTestControlPlane({ redisUrl: redis.url, sync })
    const verifier = await startTestVerifier({ redisUrl: redis.url, sync })
    servers.push(controlPlane, verifier)

    for (const [server, service] of [
      [controlPlane, 'control-plane'],
      [verifier, 'verifier'],
    ] as const) {
      expect(await readyz(server)).toBe(200)
      expect(await sample(server, 'keygate_ready', { service })).toBe(1)
      // The configured bound, so alerts compare keygate_staleness_seconds with it rather than a copied number.
      expect(await sample(server, 'keygate_max_staleness_seconds', { service })).toBe(1)
      // The series exists at 0 before any error, so rate()/increase() see the first one.
      expect(await sample(server, 'keygate_redis_errors_total', { service, connection: 'test' })).toBe(0)
      expect(await sample(server, 'keygate_redis_errors_total', { service, connection: 'test-changes' })).toBe(0)
      // Likewise stale answers (KeygateStaleAnswersServed takes increase() of the served ones) and verdicts.
      expect(await sample(server, 'keygate_stale_answers_total', { service, mode: 'served' })).toBe(0)
      expect(await sample(server, 'keygate_stale_answers_total', { service, mode: 'read-through' })).toBe(0)
      expect(await sample(server, 'keygate_verify_verdicts_total', { service, code: 'DISABLED' })).toBe(0)
    }

    await redis.stop()
    redis = undefined
    for (const server of [controlPlane, verifier]) {
      await waitFor(async () => (await sample(server, 'keygate_ready')) === 0, 'keygate_ready to turn 0', 5_000, 50)
      expect(await readyz(server)).toBe(503)
    }
    // ioredis emits an error per failed reconnect attempt, on the store's and the feed's connection alike.
    for (const connection of ['test', 'test-changes']) {
      await waitFor(
        async () => ((await sample(verifier, 'keygate_redis_errors_total', { connection })) ?? 0) >= 2,
        `errors on ${connection}`,
        5_000,
        50,
      )
    }
    // Process-wide counts: both servers' registries report the same connections.
    const errors = await sample(verifier, 'keygate_redis_errors_total', { connection: 'test' })
    expect(await sample(controlPlane, 'keygate_redis_errors_total', { connection: 'test' })).toBeGreaterThanOrEqual(
      errors!,
    )

    // Back on the same port: readiness returns (resynced), the counter keeps what it counted. The gauge and /readyz
    // are read one after the other, and with a 1 s bound a loaded machine may let the cache go stale in between:
    // both must agree on ready in the same look (CI once saw the gauge at 1 and then a 503).
    redis = await startRedisServer({ port })
    for (const server of [controlPlane, verifier]) {
      await waitFor(
        async () => (await sample(server, 'keygate_ready')) === 1 && (await readyz(server)) === 200,
        'keygate_ready to return to 1 with /readyz answering 200',
        10_000,
        50,
      )
    }
    expect(await sample(verifier, 'keygate_redis_errors_total', { connection: 'test' })).toBeGreaterThanOrEqual(errors!)
  })

  it('keygate_ready is 0 while draining, as /readyz is, though Redis is fine', async () => {
    redis ??= await startRedisServer()
    const verifier = await startTestVerifier({ redisUrl: redis.url })
    servers.push(verifier)
    expect(await sample(verifier, 'keygate_ready')).toBe(1)
    verifier.app.beginDraining()
    expect(await readyz(verifier)).toBe(503)
    expect(await sample(verifier, 'keygate_ready')).toBe(0)
  })

  it("keygate_redis_errors_total counts the connection errors of a Cluster's nodes", async () => {
    const nodes: RedisServer[] = []
    let redis: ReturnType<typeof createRedis> | undefined
    try {
      await startRedisCluster(async (node) => {
        nodes.push(await node)
        return node
      })
      const cluster = (redis = createRedis(
        nodes[0]!.url,
        'cluster-probe',
        {},
        { cluster: nodes.map((n) => ({ host: '127.0.0.1', port: n.port })) },
      ))
      await waitFor(async () => (await cluster.ping()) === 'PONG', 'the cluster connection', 10_000, 50)
      // 30 keys: some on every node (each misses one node with odds (2/3)^30).
      const writeAll = () => Promise.allSettled(Array.from({ length: 30 }, (_, i) => cluster.set(`probe-${i}`, '1')))
      await writeAll()
      const { registry } = createMetricsRegistry('probe')
      const errors = async () =>
        Number(
          /keygate_redis_errors_total\{connection="cluster-probe"[^}]*\} (\S+)/.exec(await registry.metrics())?.[1],
        )
      expect(await errors()).toBe(0)

      // A node's connection closing is no error; reaching for it again is (the commands fail on their own too).
      await nodes[2]!.stop()
      await waitFor(
        async () => {
          await writeAll()
          return (await errors()) >= 1
        },
        'an error counted for the lost node',
        10_000,
        100,
      )
    } finally {
      redis?.disconnect()
      await Promise.all(nodes.map((node) => node.stop()))
    }
  })
})
