import { afterEach, describe, expect, it } from 'vitest'
import { startKeygate } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const ROOT_KEY = 'crash-test-root-key-0123456789'
const AOF = ['--appendonly', 'yes', '--appendfsync', 'always']
const running: { stop(): Promise<unknown> }[] = []
afterEach(async () => {
  await Promise.all(
    running
      .splice(0)
      .reverse()
      .map((p) => p.stop()),
  )
})

async function post(base: string, path: string, body: unknown, auth = true) {
  const response = await fetch(`${base}/v1/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: `Bearer ${ROOT_KEY}` } : {}) },
    body: JSON.stringify(body),
  }).catch(() => undefined)
  return response
    ? { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, any> }
    : { status: 0, body: {} }
}

describe('crash recovery', () => {
  it('keeps every acknowledged write through a SIGKILL of Redis (AOF), leaves nothing half-written, and both processes recover on their own', async () => {
    let redis: RedisServer = await startRedisServer({ args: AOF })
    running.push({ stop: () => redis.stop() })
    const env = {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
      MAX_STALENESS_MS: '2000',
      POLL_INTERVAL_MS: '250',
    }
    const controlPlane = await startKeygate(['control-plane'], env)
    running.push(controlPlane)
    const verifier = await startKeygate(['verifier'], env)
    running.push(verifier)
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'crash' })

    // A stream of writes from 4 clients; Redis is SIGKILLed and restarted from its AOF in the middle.
    const acknowledged: { keyId: string; key: string }[] = []
    const failures = new Map<number, number>()
    let stop = false
    const writer = async () => {
      while (!stop) {
        const { status, body } = await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })
        if (status === 200) acknowledged.push(body as { keyId: string; key: string })
        else failures.set(status, (failures.get(status) ?? 0) + 1)
      }
    }
    const writers = Array.from({ length: 4 }, writer)
    await waitFor(() => acknowledged.length >= 40, 'writes before the crash', 10_000)
    const { port, dir } = redis
    const refused = () => [...failures.values()].reduce((sum, n) => sum + n, 0)
    const refusedBeforeCrash = refused()
    await redis.stop({ keepDir: true })
    const ackedBeforeCrash = acknowledged.length
    // Down until the writers have met the crash: a write refused.
    await waitFor(() => refused() > refusedBeforeCrash, 'a write refused while Redis is down', 10_000)
    redis = await startRedisServer({ port, dir, args: AOF })
    await waitFor(() => acknowledged.length >= ackedBeforeCrash + 40, 'writes after the restart', 15_000)
    stop = true
    await Promise.all(writers)
    console.log(
      `crash recovery: ${acknowledged.length} creates acknowledged, failures by status: ${JSON.stringify(Object.fromEntries(failures))}`,
    )
    expect([...failures.keys()].every((status) => status === 503)).toBe(true)

    // Both processes recovered by themselves.
    await waitFor(
      async () => (await fetch(`${controlPlane.url}/readyz`)).status === 200,
      'the control plane to be ready',
      10_000,
      50,
    )
    await waitFor(
      async () => (await fetch(`${verifier.url}/readyz`)).status === 200,
      'the verifier to be ready',
      10_000,
      50,
    )

    // Every acknowledged key is there, whole, and verifies.
    for (const { keyId, key } of acknowledged) {
      const read = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${keyId}`, {
        headers: { authorization: `Bearer ${ROOT_KEY}` },
      })
      expect(read.status, keyId).toBe(200)
      expect((await post(verifier.url, 'keys.verifyKey', { key }, false)).body).toMatchObject({ valid: true, keyId })
    }
    // Nothing half-written: every key listed is whole (a create whose answer was lost with Redis may exist,
    // complete, without having been acknowledged; none is a pointer without its record).
    const listed: string[] = []
    let cursor: string | undefined
    do {
      const page = await fetch(
        `${controlPlane.url}/v1/apis.listKeys?apiId=${api.apiId}&limit=100${cursor ? `&cursor=${cursor}` : ''}`,
        { headers: { authorization: `Bearer ${ROOT_KEY}` } },
      )
      const body = (await page.json()) as { keys: { id: string }[]; cursor?: string }
      listed.push(...body.keys.map((k) => k.id))
      cursor = body.cursor
    } while (cursor)
    const acked = new Set(acknowledged.map((k) => k.keyId))
    for (const id of acked) expect(listed).toContain(id)
    const unacknowledged = listed.filter((id) => !acked.has(id))
    for (const id of unacknowledged) {
      const read = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${id}`, {
        headers: { authorization: `Bearer ${ROOT_KEY}` },
      })
      expect(read.status).toBe(200)
    }
    expect(unacknowledged.length).toBeLessThanOrEqual(4)
  }, 60_000)

  it('a verifier killed mid-request gives its clients an answer or an error, never a wrong verdict', async () => {
    const redis = await startRedisServer()
    running.push({ stop: () => redis.stop() })
    const env = { REDIS_URL: redis.url, KEYGATE_ROOT_KEY: ROOT_KEY, LOG_LEVEL: 'warn' }
    const controlPlane = await startKeygate(['control-plane'], env)
    running.push(controlPlane)
    const verifier = await startKeygate(['verifier'], env)
    running.push(verifier)
    const { body: api } = await post(controlPlane.url, 'apis.createApi', { name: 'kill' })
    const valid = (await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId })).body
    const disabled = (await post(controlPlane.url, 'keys.createKey', { apiId: api.apiId, enabled: false })).body

    let answers = 0
    let errors = 0
    const client = async (key: string, expected: boolean) => {
      for (let i = 0; i < 400; i++) {
        const { status, body } = await post(verifier.url, 'keys.verifyKey', { key }, false)
        if (status === 0) {
          errors++
          return
        }
        answers++
        if (status === 200) expect(body.valid).toBe(expected)
      }
    }
    const clients = [
      client(valid.key, true),
      client(disabled.key, false),
      client(valid.key, true),
      client(disabled.key, false),
    ]
    await waitFor(() => answers > 100, 'answers before the kill')
    verifier.child.kill('SIGKILL')
    await Promise.all(clients)
    console.log(`verifier SIGKILL: ${answers} answers (all correct), ${errors} clients cut off`)
    expect(errors).toBeGreaterThan(0)
  })
})
