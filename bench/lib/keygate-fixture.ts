import { startRedisServer, type RedisServer } from '../../test/support/redis-process.js'
import { startKeygate, type BenchProcess } from './processes.js'

export const BENCH_ROOT_KEY = 'bench-root-key-0123456789abcdef'

/** A bench Redis (its own, no persistence) and a control plane on it, unpinned: they set the stage. */
export interface KeygateFixture {
  redis: RedisServer
  controlPlane: BenchProcess
  env: Record<string, string>
  call(path: string, body: unknown): Promise<Record<string, any>>
  createApi(name: string): Promise<string>
  /** Creates `count` keys with `concurrency` requests in flight. */
  createKeys(apiId: string, count: number, concurrency?: number, extra?: Record<string, unknown>): Promise<{ keyId: string; key: string }[]>
  stop(): Promise<void>
}

export async function startKeygateFixture(extraEnv: Record<string, string> = {}): Promise<KeygateFixture> {
  const redis = await startRedisServer()
  const env = { REDIS_URL: redis.url, KEYGATE_ROOT_KEY: BENCH_ROOT_KEY, MANAGEMENT_RATE_LIMIT: '0', ...extraEnv }
  const controlPlane = await startKeygate(['control-plane'], env, { pin: false })
  const call = async (path: string, body: unknown) => {
    const response = await fetch(`${controlPlane.url}/v1/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${BENCH_ROOT_KEY}` },
      body: JSON.stringify(body),
    })
    const answer = (await response.json()) as Record<string, any>
    if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`)
    return answer
  }
  return {
    redis,
    controlPlane,
    env,
    call,
    async createApi(name) {
      return (await call('apis.createApi', { name })).apiId as string
    },
    async createKeys(apiId, count, concurrency = 32, extra = {}) {
      const keys: { keyId: string; key: string }[] = []
      let next = 0
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < count) {
          next++
          const { keyId, key } = await call('keys.createKey', { apiId, ...extra })
          keys.push({ keyId, key })
        }
      }))
      return keys
    },
    async stop() {
      await controlPlane.stop()
      await redis.stop()
    },
  }
}
