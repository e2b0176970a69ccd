import type { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ensureAnalyticsSchema } from '../../control-plane/analytics/engine/analytics-tables.js'
import { SHARD_COUNT } from '../../shared/shards.js'
import { openBackend as openStoreBackend, redisConnections } from '../../shared/store/backend.js'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { overriding } from '../support/store-overrides.js'
import { startRedisCluster } from '../support/redis-cluster.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

/**
 * What an idle control plane costs Redis, counted by Redis itself (INFO commandstats: every command, those run inside
 * scripts too), and that a change still becomes a delivered event within a second while it idles: the deriver is
 * woken by the change feed rather than polling the logs.
 *
 * The window holds every periodic step at least twice: the deriver's full look (every 5 s) and its read of every
 * shard's credit notices (every 10 s), the lease, deadlines and the worker (every second or two).
 */
const WINDOW_MS = 20_000
const IDLE_BUDGET_PER_SECOND = 50

/** Every command each node has run so far, by name. */
async function commandCalls(nodes: Redis[]): Promise<Map<string, number>> {
  const calls = new Map<string, number>()
  for (const node of nodes) {
    for (const [, name, count] of (await node.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
      calls.set(name!, (calls.get(name!) ?? 0) + Number(count))
  }
  return calls
}

/**
 * Commands the nodes ran over WINDOW_MS, by name, the window's own reads left out (the INFO commandstats that opened
 * it is counted by the one that closes it, on each node), and how long it was, s.
 */
async function idleCalls(nodes: Redis[]): Promise<{ calls: Map<string, number>; seconds: number }> {
  const before = await commandCalls(nodes)
  const since = performance.now()
  // Idle: no request comes; what the nodes run meanwhile is the processes' own doing, and must stay under budget.
  await nothingHappensFor(WINDOW_MS)
  const after = await commandCalls(nodes)
  const seconds = (performance.now() - since) / 1000
  const calls = new Map([...after].map(([name, count]) => [name, count - (before.get(name) ?? 0)]))
  calls.set('info', (calls.get('info') ?? 0) - nodes.length)
  return { calls, seconds }
}

/**
 * The backend with its revision reads counted, those of the verifier's poll (shard-sync.ts) apart: the deriver reads
 * the revisions too (its full look), and that is the control plane's cost.
 */
function countingPolls(backend: Backend): { backend: Backend; polls: { count: number } } {
  const polls = { count: 0 }
  const { changes } = backend.store
  const store = overriding(backend.store, {
    changes: {
      readRevisions: () => {
        if (new Error().stack?.includes('shard-sync')) polls.count++
        return changes.readRevisions()
      },
    },
  })
  return { backend: { ...backend, store }, polls }
}

const sum = (calls: Map<string, number>) => [...calls.values()].reduce((total, count) => total + count, 0)
/** The commands that ran most, per second: what to look at when the budget is exceeded. */
const most = (calls: Map<string, number>, seconds: number) =>
  JSON.stringify(
    [...calls]
      .sort(([, a], [, b]) => b - a)
      .slice(0, 8)
      .map(([name, count]) => [name, Math.round((count / seconds) * 10) / 10]),
  )

describe('an idle control plane', () => {
  const servers: RedisServer[] = []
  const closing: (() => Promise<void>)[] = []
  // One embedded analytics engine for the file (chDB allows one per process), for each test's control plane.
  const analyticsEngine = new ChdbEngine(mkdtempSync(join(tmpdir(), 'keygate-idle-analytics-')), { temporary: true })
  let controlPlanes = 0
  beforeAll(() => ensureAnalyticsSchema(analyticsEngine))
  afterAll(() => analyticsEngine.close())
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close()
    await Promise.all(servers.splice(0).map((server) => server.stop()))
  })

  /** A control plane on `backend`, an endpoint at a receiver, and one event delivered: everything started. */
  async function runningControlPlane(backend: Backend) {
    const receiver = await startWebhookReceiver()
    closing.push(() => receiver.stop())
    // With its analytics engine, as a control plane runs: its ingest looks at the buffers while idle too.
    const server: TestServer = await startTestControlPlane({
      backend,
      webhookPolicy: { allowPrivateAddresses: true },
      analytics: { engine: analyticsEngine, holder: `idle-${++controlPlanes}` },
    })
    closing.push(() => server.close())
    const post = async (path: string, payload: object, to = server) => {
      const answer = await to.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
      expect(answer.statusCode, answer.body).toBe(200)
      return answer.json<Record<string, string>>()
    }
    receiver.useSecret((await post('webhooks.createEndpoint', { url: receiver.url })).secret!)
    const { apiId } = await post('apis.createApi', { name: 'idle' })
    /** Creates a key through `to`'s API: how long until its key.created reached the receiver, ms. */
    const createdToDelivered = async (to = server) => {
      const since = Date.now()
      const { keyId } = await post('keys.createKey', { apiId }, to)
      const event = await waitFor(
        () => receiver.events.find((e) => e.type === 'key.created' && e.data.keyId === keyId),
        `key.created of ${keyId}`,
        10_000,
        5,
      )
      return event.at - since
    }
    /** Spends a key's last credits through `to`'s verifyKey: how long until key.credits.exhausted arrived, ms. */
    const spentToDelivered = async (to = server) => {
      const { key, keyId } = await post('keys.createKey', { apiId, remaining: 1 })
      const since = Date.now()
      const verified = await to.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key } })
      expect(verified.json()).toMatchObject({ valid: true, remaining: 0 })
      const event = await waitFor(
        () => receiver.events.find((e) => e.type === 'key.credits.exhausted' && e.data.keyId === keyId),
        `key.credits.exhausted of ${keyId}`,
        15_000,
        5,
      )
      return event.at - since
    }
    await createdToDelivered()
    return { server, createdToDelivered, spentToDelivered }
  }

  it(`costs one Redis at most ${IDLE_BUDGET_PER_SECOND} commands a second, and delivers a change within 1 s`, async () => {
    const redis = await startRedisServer()
    servers.push(redis)
    const backend = await openBackend(redis.url)
    closing.push(() => backend.close())
    const { createdToDelivered, spentToDelivered } = await runningControlPlane(backend)

    const { calls, seconds } = await idleCalls([redis.admin])
    const perSecond = sum(calls) / seconds
    console.info(`idle control plane, one Redis: ${perSecond.toFixed(1)} commands/s, the most: ${most(calls, seconds)}`)
    expect(perSecond, `commands/s while idle, the most: ${most(calls, seconds)}`).toBeLessThanOrEqual(
      IDLE_BUDGET_PER_SECOND,
    )
    // Idle since: a key created through this control plane, and one through another (a replica without the lease).
    const created = await createdToDelivered()
    console.info(`idle, one Redis: a key.created delivered ${created} ms after its write`)
    expect(created).toBeLessThan(1_000)
    const replica = await startTestControlPlane({ redisUrl: redis.url, webhookPolicy: { allowPrivateAddresses: true } })
    closing.push(() => replica.close())
    expect(await createdToDelivered(replica)).toBeLessThan(1_000)
    // Credits spent on a verify path: the notice is published too.
    expect(await spentToDelivered(replica)).toBeLessThan(1_000)
  })

  // A Cluster has no one command that reads every shard's revision: the verifier's revocation poll reads the 64 one by
  // one (HMGET, each on the node of its shard) and each master's run_id (INFO, on every master) every
  // POLL_INTERVAL_MS. That is the verifier's cost, left out; everything else, the deriver's own reads of the revisions
  // included, is held to the same budget.
  it(`costs a Cluster at most ${IDLE_BUDGET_PER_SECOND} commands a second beside the verifier's revision poll, and delivers a change within 1 s`, async () => {
    const nodes = await startRedisCluster(async (node) => {
      const started = await node
      servers.push(started)
      return started
    })
    const seeds = nodes.map((node) => ({ host: '127.0.0.1', port: node.port }))
    const opened = openStoreBackend({
      kind: 'redis',
      connections: redisConnections('redis://127.0.0.1:6379', 'idle-cluster', { cluster: seeds }),
    })
    closing.push(() => opened.close())
    const { backend, polls } = countingPolls(opened)
    const { createdToDelivered, spentToDelivered } = await runningControlPlane(backend)

    const pollsBefore = polls.count
    const { calls, seconds } = await idleCalls(nodes.map((node) => node.admin))
    // Each poll's commands, wherever they ran: one HMGET a shard and one INFO a master (every node is one here).
    const polled = polls.count - pollsBefore
    expect(polled).toBeGreaterThan(0)
    calls.set('hmget', (calls.get('hmget') ?? 0) - polled * SHARD_COUNT)
    calls.set('info', (calls.get('info') ?? 0) - polled * nodes.length)
    const perSecond = sum(calls) / seconds
    console.info(
      `idle control plane, a Cluster of ${nodes.length}: ${perSecond.toFixed(1)} commands/s beside ${polled} polls of` +
        ` the verifier, the most: ${most(calls, seconds)}`,
    )
    expect(perSecond, `commands/s while idle, the most: ${most(calls, seconds)}`).toBeLessThanOrEqual(
      IDLE_BUDGET_PER_SECOND,
    )
    const [created, spent] = [await createdToDelivered(), await spentToDelivered()]
    console.info(`idle, a Cluster: key.created delivered in ${created} ms, key.credits.exhausted in ${spent} ms`)
    expect(created).toBeLessThan(1_000)
    expect(spent).toBeLessThan(1_000)
  })
})
