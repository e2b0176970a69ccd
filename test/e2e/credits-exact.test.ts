import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startKeygate, type KeygateProcess } from '../support/processes.js'
import { startRedisServer, type RedisServer } from '../support/redis-server.js'

const ROOT_KEY = 'credits-test-root-key-0123456789'

describe('credits and limits across two verifier processes hammering one key', () => {
  let redis: RedisServer
  let controlPlane: KeygateProcess
  const verifiers: KeygateProcess[] = []

  beforeAll(async () => {
    redis = await startRedisServer()
    controlPlane = await startKeygate(['control-plane'], {
      REDIS_URL: redis.url,
      KEYGATE_ROOT_KEY: ROOT_KEY,
      LOG_LEVEL: 'warn',
    })
    for (let i = 0; i < 2; i++)
      verifiers.push(await startKeygate(['verifier'], { REDIS_URL: redis.url, LOG_LEVEL: 'warn' }))
  })
  afterAll(async () => {
    await Promise.all(verifiers.map((v) => v.stop()))
    await controlPlane?.stop()
    await redis?.stop()
  })

  it('lets exactly `remaining` of 3× as many concurrent calls through', async () => {
    const admin = (path: string, body: unknown) =>
      fetch(`${controlPlane.url}/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, string>>)
    const { apiId } = await admin('apis.createApi', { name: 'exact' })
    const { key, keyId } = await admin('keys.createKey', { apiId, remaining: 150 })

    const calls = 450
    const outcomes = await Promise.all(
      Array.from({ length: calls }, async (_, i) => {
        const verifier = verifiers[i % 2]!
        const response = await fetch(`${verifier.url}/v1/keys.verifyKey`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key }),
        })
        return (await response.json()) as { valid: boolean; code: string }
      }),
    )
    const valid = outcomes.filter((o) => o.valid).length
    console.log(`credits: ${valid} of ${calls} concurrent calls through 2 verifiers succeeded (remaining was 150)`)
    expect(valid).toBe(150)
    expect(outcomes.filter((o) => !o.valid).every((o) => o.code === 'USAGE_EXCEEDED')).toBe(true)
    const read = await fetch(`${controlPlane.url}/v1/keys.getKey?keyId=${keyId}`, {
      headers: { authorization: `Bearer ${ROOT_KEY}` },
    })
    expect(((await read.json()) as { remaining: number }).remaining).toBe(0)
  })

  async function hammer(
    ratelimit: { limit: number; duration: number; async: boolean },
    calls: number,
  ): Promise<number> {
    const admin = (path: string, body: unknown) =>
      fetch(`${controlPlane.url}/v1/${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ROOT_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((r) => r.json() as Promise<Record<string, string>>)
    const { apiId } = await admin('apis.createApi', { name: 'limits' })
    const { key } = await admin('keys.createKey', { apiId, ratelimit })
    const outcomes = await Promise.all(
      Array.from({ length: calls }, async (_, i) => {
        const response = await fetch(`${verifiers[i % 2]!.url}/v1/keys.verifyKey`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ key }),
        })
        return (await response.json()) as { valid: boolean; code: string }
      }),
    )
    expect(outcomes.filter((o) => !o.valid).every((o) => o.code === 'RATE_LIMITED')).toBe(true)
    return outcomes.filter((o) => o.valid).length
  }

  it('an exact limit (async:false) lets exactly `limit` concurrent calls through', async () => {
    // 31-day windows: a run cannot plausibly straddle a window boundary.
    const valid = await hammer({ limit: 100, duration: 31 * 86_400_000, async: false }, 300)
    console.log(`ratelimit async:false: ${valid} of 300 concurrent calls through 2 verifiers (limit 100)`)
    expect(valid).toBe(100)
  })

  it('an async limit lets through at least `limit` and at most verifiers × limit in a window', async () => {
    const valid = await hammer({ limit: 100, duration: 31 * 86_400_000, async: true }, 300)
    console.log(`ratelimit async:true: ${valid} of 300 concurrent calls through 2 verifiers (limit 100; bound 200)`)
    expect(valid).toBeGreaterThanOrEqual(100)
    expect(valid).toBeLessThanOrEqual(200)
  })
})
