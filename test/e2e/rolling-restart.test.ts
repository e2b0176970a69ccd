import { afterAll, describe, expect, it } from 'vitest'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'rolling-test-root-key-0123456789'

/**
 * A rolling restart of the verifiers behind load, with a readiness-gated balancer as Kubernetes has one
 * (endpoints follow /readyz): with SHUTDOWN_DELAY_MS longer than the balancer's readiness period, not one
 * request fails.
 */
describe('rolling restart of verifiers behind load', () => {
  let redis: RedisServer
  const processes: KeygateProcess[] = []
  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()))
    await redis?.stop()
  })

  it('fails zero requests', async () => {
    redis = await startRedisServer()
    const env = { REDIS_URL: redis.url, KEYGATE_ROOT_KEY: ROOT_KEY, LOG_LEVEL: 'warn', SHUTDOWN_DELAY_MS: '400' }
    const controlPlane = await startKeygate(['control-plane'], env)
    processes.push(controlPlane)
    const start = async () => {
      const verifier = await startKeygate(['verifier'], env)
      processes.push(verifier)
      return verifier
    }
    const pool = [await start(), await start()]
    const admin = (path: string, body: unknown) =>
      fetch(`${controlPlane.url}/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, string>>)
    const { apiId } = await admin('apis.createApi', { name: 'rolling' })
    const { key } = await admin('keys.createKey', { apiId })

    // The balancer: endpoints are the verifiers whose /readyz said 200 at the last probe (every 50 ms).
    let endpoints = pool.map((v) => v.url)
    let probing = true
    const prober = (async () => {
      while (probing) {
        const ready = await Promise.all(
          pool.map(async (v) =>
            (await fetch(`${v.url}/readyz`).catch(() => undefined))?.status === 200 ? v.url : undefined,
          ),
        )
        endpoints = ready.filter((url): url is string => url !== undefined)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    })()

    let ok = 0
    const failures: string[] = []
    let loading = true
    const client = async (n: number) => {
      for (let i = n; loading; i++) {
        const target = endpoints[i % Math.max(1, endpoints.length)]
        if (!target) {
          await new Promise((resolve) => setTimeout(resolve, 5))
          continue
        }
        try {
          const response = await fetch(`${target}/v1/keys.verifyKey`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ key }),
          })
          const body = (await response.json()) as { valid?: boolean }
          if (response.status === 200 && body.valid === true) ok++
          else failures.push(`${response.status} from ${target}`)
        } catch (err) {
          failures.push(`${(err as Error).message} from ${target}`)
        }
      }
    }
    const clients = Array.from({ length: 6 }, (_, n) => client(n))

    await waitFor(() => ok > 200, 'load before the restart', 10_000)
    for (const index of [0, 1]) {
      const old = pool[index]!
      const stopped = old.stop('SIGTERM')
      pool[index] = await start()
      expect(await stopped).toBe(0)
      await waitFor(() => endpoints.includes(pool[index]!.url), 'the replacement to take traffic', 10_000)
    }
    const before = ok
    await waitFor(() => ok > before + 200, 'load after the restart', 10_000)
    loading = false
    probing = false
    await Promise.all([...clients, prober])
    console.log(`rolling restart: ${ok} requests answered valid, ${failures.length} failed`)
    expect(failures).toEqual([])
  }, 60_000)
})
