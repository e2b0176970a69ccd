import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { jsonPoster, startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { startClusterBehindProxies } from '../support/redis-cluster.js'
import { startStrandingProxy } from '../support/stranding-proxy.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { pollUntil, waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'stranded-root-key-0123456789abcdef'
const BOUND_MS = 2_000
/** The promise: ready again within this long of the fault. */
const RECOVERED_WITHIN_MS = 10_000
const post = jsonPoster(ROOT_KEY)
const redis = useRedisServer()
const stoppable: { stop(): Promise<unknown> }[] = []
afterAll(async () => {
  await Promise.all(stoppable.map((process) => process.stop()))
})

/**
 * Keygate's connections Redis sees now: name → their ids (on a Cluster, ioredis names its subscriber connection
 * `ioredis-cluster(subscriber):<name>`). Redis numbers connections in the order they come, so a
 * connection made after another has a greater id (ages, in whole seconds, cannot tell one made just before a fault
 * from one made just after).
 */
async function connectionIds(admin: Redis): Promise<Map<string, number[]>> {
  const list = (await admin.call('CLIENT', 'LIST')) as string
  const ids = new Map<string, number[]>()
  for (const line of list.split('\n')) {
    const name = /\bname=(\S*keygate-\S+)/.exec(line)?.[1]
    const id = Number(/\bid=(\d+)/.exec(line)?.[1])
    if (name !== undefined) ids.set(name, [...(ids.get(name) ?? []), id])
  }
  return ids
}

/**
 * Connections stranded without a reset (a firewall or NAT that forgot them, a Redis pod whose address vanished) get
 * no answer ever again, while new connections work: here a proxy between the processes and Redis stops passing
 * anything on the connections open at that moment, telling neither end. Every connection of both processes — the
 * verifier's store connection and its change-feed subscriber, the control plane's — must be replaced: the verifier
 * answers no revoked key as valid past the bound meanwhile, never a 500, and is ready again within 10 s; the control
 * plane writes again within 10 s.
 */
describe('connections to Redis that stop answering', () => {
  it('are replaced: the verifier is ready and current again, the control plane writes again, within 10 s', async () => {
    const [verifierPath, controlPlanePath] = await Promise.all([
      startStrandingProxy(redis.url),
      startStrandingProxy(redis.url),
    ])
    stoppable.push(verifierPath, controlPlanePath)
    const env = {
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
    }
    const [controlPlane, verifier]: KeygateProcess[] = await Promise.all([
      startKeygate(['control-plane'], { ...env, REDIS_URL: controlPlanePath.url }),
      startKeygate(['verifier'], { ...env, REDIS_URL: verifierPath.url }),
    ])
    stoppable.push(controlPlane!, verifier!)
    const admin = new Redis(redis.url)
    stoppable.push({ stop: async () => void admin.disconnect() })
    const { body: api } = await post(controlPlane!.url, 'apis.createApi', { name: 'stranded' })
    const { body: revoked } = await post(controlPlane!.url, 'keys.createKey', { apiId: api.apiId })
    const { body: kept } = await post(controlPlane!.url, 'keys.createKey', { apiId: api.apiId })
    const verify = async (key: string) => {
      const response = await post(verifier!.url, 'keys.verifyKey', { key }, false)
      return { status: response.status, valid: response.body.valid === true, code: response.body.code as string }
    }
    expect((await verify(revoked.key)).valid).toBe(true)
    await waitFor(
      async () => (await connectionIds(admin)).has('keygate-verifier-changes'),
      'the verifier to subscribe',
      5_000,
    )
    const before = await connectionIds(admin)
    expect([...before.keys()]).toEqual(
      expect.arrayContaining([
        'keygate-verifier',
        'keygate-verifier-changes',
        'keygate-control-plane',
        'keygate-control-plane-changes',
      ]),
    )

    // The verifier's path dies; the control plane's still works: a revoke made now must not verify past the bound.
    // Redis' newest connection as the path dies: any made after the fault has a greater id.
    const verifierNewest = Math.max(...[...(await connectionIds(admin))].flatMap(([, ids]) => ids))
    verifierPath.strand()
    const strandedAt = Date.now()
    expect((await post(controlPlane!.url, 'keys.updateKey', { keyId: revoked.keyId, enabled: false })).status).toBe(200)
    const revokedAt = Date.now()
    const statuses = new Set<number>()
    let lateValid = 0
    // Asked every 100 ms until it is ready and current again: every answer meanwhile is judged below.
    const readyAgainAt = await pollUntil(
      async () => {
        const sentAt = Date.now()
        const [answer, ready] = await Promise.all([
          verify(revoked.key),
          fetch(`${verifier!.url}/readyz`).then((response) => response.status),
        ])
        statuses.add(answer.status)
        if (answer.valid && sentAt - revokedAt > BOUND_MS) lateValid++
        if (ready === 200 && answer.code === 'DISABLED' && (await verify(kept.key)).valid) return Date.now()
        return undefined
      },
      'the verifier ready and current',
      strandedAt + RECOVERED_WITHIN_MS + 2_000 - Date.now(),
      100,
    )
    console.log(`stranded verifier: ready and current ${readyAgainAt - strandedAt} ms after the fault`)
    expect(lateValid).toBe(0)
    expect([...statuses].filter((status) => status >= 500 && status !== 503)).toEqual([])
    expect(readyAgainAt - strandedAt).toBeLessThan(RECOVERED_WITHIN_MS)

    // The control plane's path dies: it writes again within 10 s (a 503 meanwhile means "retry").
    const controlPlaneNewest = Math.max(...[...(await connectionIds(admin))].flatMap(([, ids]) => ids))
    controlPlanePath.strand()
    const writesStrandedAt = Date.now()
    const written = await waitFor(
      async () => {
        const made = await post(controlPlane!.url, 'keys.createKey', { apiId: api.apiId })
        expect(made.status === 200 || made.status === 503, JSON.stringify(made.body)).toBe(true)
        return made.status === 200 ? Date.now() : undefined
      },
      'a write after the control plane was stranded',
      RECOVERED_WITHIN_MS,
      100,
    )
    console.log(`stranded control plane: writing ${written - writesStrandedAt} ms after the fault`)

    // Every connection was replaced, the change-feed subscribers included (their heartbeat found them dead): Redis
    // sees a new one of each name, made after its process's fault, beside the stranded old one.
    await waitFor(
      async () => {
        const now = await connectionIds(admin)
        return [...before.keys()].every((name) => {
          const fault = name.startsWith('keygate-verifier') ? verifierNewest : controlPlaneNewest
          return (now.get(name) ?? []).some((id) => id > fault)
        })
      },
      'a new connection of every name',
      RECOVERED_WITHIN_MS,
      200,
    )
    expect(verifierPath.connections()).toBeGreaterThan(2)
  }, 60_000)

  it('through a black hole that resumes: no valid answer past the bound, not ready during it, ready soon after', async () => {
    const path = await startStrandingProxy(redis.url)
    stoppable.push(path)
    const env = {
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
    }
    // The control plane reaches Redis directly: only the verifier's path goes dark.
    const [controlPlane, verifier] = await Promise.all([
      startKeygate(['control-plane'], { ...env, REDIS_URL: redis.url }),
      startKeygate(['verifier'], { ...env, REDIS_URL: path.url }),
    ])
    stoppable.push(controlPlane, verifier)
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'black hole' })
    const { body: revoked } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    expect((await post(verifier.url, 'keys.verifyKey', { key: revoked.key }, false)).body.valid).toBe(true)

    path.blackhole()
    const holeAt = Date.now()
    expect((await post(controlPlane.url, 'keys.updateKey', { keyId: revoked.keyId, enabled: false })).status).toBe(200)
    const revokedAt = Date.now()
    let lateValid = 0
    let wasNotReady = false
    const statuses = new Set<number>()
    // 8 s of black hole, the verifier asked throughout (a request answered from Redis waits for the hole to end).
    while (Date.now() - holeAt < 8_000) {
      const sentAt = Date.now()
      const [answer, ready] = await Promise.all([
        post(verifier.url, 'keys.verifyKey', { key: revoked.key }, false),
        fetch(`${verifier.url}/readyz`).then((response) => response.status),
      ])
      statuses.add(answer.status)
      if (answer.body.valid === true && sentAt - revokedAt > BOUND_MS) lateValid++
      if (ready !== 200) wasNotReady = true
      // The hole holds for its 8 s whatever the verifier does: no valid answer past the bound comes meanwhile.
      await nothingHappensFor(100)
    }
    path.resume()
    const resumedAt = Date.now()
    await waitFor(
      async () =>
        (await fetch(`${verifier.url}/readyz`)).status === 200 &&
        (await post(verifier.url, 'keys.verifyKey', { key: revoked.key }, false)).body.code === 'DISABLED',
      'the verifier ready and current after the black hole',
      5_000,
      50,
    )
    console.log(`black hole: ready and current ${Date.now() - resumedAt} ms after it ended`)
    expect(lateValid).toBe(0)
    expect(wasNotReady).toBe(true)
    expect([...statuses].filter((status) => status >= 500 && status !== 503)).toEqual([])
  }, 60_000)
  it('on a Cluster: every node connection and subscriber is replaced, ready and writing again within 10 s', async () => {
    // Both processes reach every node through a proxy of its own, which the nodes announce as their address.
    const { nodes, paths, ports } = await startClusterBehindProxies((started) => stoppable.push(started))
    const env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_CLUSTER_NODES: ports.map((port) => `127.0.0.1:${port}`).join(','),
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'error',
      MAX_STALENESS_MS: String(BOUND_MS),
      POLL_INTERVAL_MS: '250',
    }
    const [controlPlane, verifier] = await Promise.all([
      startKeygate(['control-plane'], env),
      startKeygate(['verifier'], env),
    ])
    stoppable.push(controlPlane, verifier)
    const admins = nodes.map((node) => node.admin)
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'stranded cluster' })
    const { body: revoked } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    const { body: kept } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
    const verify = async (key: string) => {
      const response = await post(verifier.url, 'keys.verifyKey', { key }, false)
      return { status: response.status, valid: response.body.valid === true, code: response.body.code as string }
    }
    expect((await verify(revoked.key)).valid).toBe(true)
    const subscribers = [
      'ioredis-cluster(subscriber):keygate-verifier-changes',
      'ioredis-cluster(subscriber):keygate-control-plane-changes',
    ]
    /** Every node's connections by name, merged. */
    const names = async () => {
      const seen = new Set<string>()
      for (const admin of admins) for (const name of (await connectionIds(admin)).keys()) seen.add(name)
      return [...seen]
    }
    await waitFor(
      async () => {
        const now = await names()
        return subscribers.every((name) => now.includes(name))
      },
      'both processes to subscribe',
      5_000,
    )
    const before = await names()
    expect(before).toEqual(expect.arrayContaining(['keygate-verifier', 'keygate-control-plane', ...subscribers]))
    /** Each node's newest connection id now: any connection made later has a greater one. */
    const newest = () =>
      Promise.all(admins.map(async (admin) => Math.max(0, ...[...(await connectionIds(admin)).values()].flat())))
    /** Until every named connection has one made after `newestBefore` on some node. */
    const replaced = (named: string[], newestBefore: number[], what: string) =>
      waitFor(
        async () => {
          const now = await Promise.all(admins.map((admin) => connectionIds(admin)))
          return named.every((name) =>
            now.some((ids, node) => (ids.get(name) ?? []).some((id) => id > newestBefore[node]!)),
          )
        },
        what,
        RECOVERED_WITHIN_MS,
        200,
      )

    // Only the subscribers' paths die: nothing but their heartbeat can tell, as they only listen.
    const beforeSubscribersStranded = await newest()
    for (const path of paths) path.strand('subscriber')
    await replaced(subscribers, beforeSubscribersStranded, 'new subscribers after theirs were stranded')

    // Every path of both processes dies at once; new connections pass.
    const beforeStranded = await newest()
    for (const path of paths) path.strand()
    const strandedAt = Date.now()
    // The revoke is acknowledged once the control plane writes again (a 503 until then means "retry").
    let revokedAt: number | undefined
    const revoking = waitFor(
      async () => {
        const answer = await post(controlPlane.url, 'keys.updateKey', { keyId: revoked.keyId, enabled: false })
        expect(answer.status === 200 || answer.status === 503, JSON.stringify(answer.body)).toBe(true)
        if (answer.status === 200) revokedAt = Date.now()
        return answer.status === 200
      },
      'the control plane to write again',
      RECOVERED_WITHIN_MS,
      100,
    )
    // Awaited below, once the verifier's loop is done.
    revoking.catch(() => {})
    const statuses = new Set<number>()
    let lateValid = 0
    // Asked every 100 ms until it is ready and current again: every answer meanwhile is judged below.
    const readyAgainAt = await pollUntil(
      async () => {
        const sentAt = Date.now()
        const [answer, ready] = await Promise.all([
          verify(revoked.key),
          fetch(`${verifier.url}/readyz`).then((response) => response.status),
        ])
        statuses.add(answer.status)
        if (answer.valid && revokedAt !== undefined && sentAt - revokedAt > BOUND_MS) lateValid++
        if (ready === 200 && answer.code === 'DISABLED' && (await verify(kept.key)).valid) return Date.now()
        return undefined
      },
      'the verifier ready and current',
      strandedAt + RECOVERED_WITHIN_MS + 2_000 - Date.now(),
      100,
    )
    await revoking
    console.log(
      `stranded cluster: writing ${revokedAt! - strandedAt} ms, verifier ready and current ${readyAgainAt - strandedAt} ms after the fault`,
    )
    expect(lateValid).toBe(0)
    expect([...statuses].filter((status) => status >= 500 && status !== 503)).toEqual([])
    expect(readyAgainAt - strandedAt).toBeLessThan(RECOVERED_WITHIN_MS)
    await replaced(before, beforeStranded, 'a new connection of every name')
  }, 60_000)
})
