import { startRedisServer, type RedisServer } from '../../test/support/redis-process.js'
import { execFileSync } from 'node:child_process'
import { canPin, SERVER_CORE } from './cores.js'
import { startKeygate, type BenchProcess } from './processes.js'
import { progress } from './rounds.js'

export const BENCH_ROOT_KEY = 'bench-root-key-0123456789abcdef'

/** A bench Redis (its own, no persistence, on the server core) and a control plane on it (unpinned): the stage. */
export interface KeygateFixture {
  redis: RedisServer
  /** The bench Redis' process id (for CPU accounting and pinning). */
  redisPid: number
  controlPlane: BenchProcess
  env: Record<string, string>
  call(path: string, body: unknown): Promise<Record<string, any>>
  createApi(name: string): Promise<string>
  /** Creates `count` keys with `concurrency` requests in flight. */
  createKeys(
    apiId: string,
    count: number,
    concurrency?: number,
    extra?: Record<string, unknown>,
  ): Promise<{ keyId: string; key: string }[]>
  stop(): Promise<void>
}

export async function startKeygateFixture(extraEnv: Record<string, string> = {}): Promise<KeygateFixture> {
  const redis = await startRedisServer()
  // Redis shares the server core: a design that leans on Redis per request pays for it there, not on the load
  // generator's core (where it would also slow the load down).
  const pid = /process_id:(\d+)/.exec(await redis.admin.info('server'))?.[1]
  if (pid === undefined) {
    await redis.stop()
    throw new Error('the bench Redis did not say its process id')
  }
  if (canPin) execFileSync('taskset', ['-pc', String(SERVER_CORE), pid], { stdio: 'ignore' })
  const env = { REDIS_URL: redis.url, KEYGATE_ROOT_KEY: BENCH_ROOT_KEY, MANAGEMENT_RATE_LIMIT: '0', ...extraEnv }
  const controlPlane = await startKeygate(['control-plane'], env, { pin: false }).catch(async (err: unknown) => {
    await redis.stop()
    throw err
  })
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
    redisPid: Number(pid),
    controlPlane,
    env,
    call,
    async createApi(name) {
      return (await call('apis.createApi', { name })).apiId as string
    },
    async createKeys(apiId, count, concurrency = 32, extra = {}) {
      const keys: { keyId: string; key: string }[] = []
      let next = 0
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count) {
            next++
            const { keyId, key } = await call('keys.createKey', { apiId, ...extra })
            keys.push({ keyId, key })
          }
        }),
      )
      return keys
    },
    async stop() {
      await controlPlane.stop()
      await redis.stop()
    },
  }
}

/**
 * Ends a scenario that paused processes (bench:cpu's rounds): resumes and stops its servers, the last started first,
 * then resumes the control plane and stops the fixture. A stopped (SIGSTOP) process would never see its SIGTERM.
 */
export async function stopPausedStage(servers: BenchProcess[], fixture: KeygateFixture): Promise<void> {
  const resume = (pid: number | undefined) => {
    try {
      if (pid !== undefined) process.kill(pid, 'SIGCONT')
    } catch {
      // Already gone.
    }
  }
  for (const server of servers) resume(server.child.pid)
  for (const server of [...servers].reverse()) await server.stop()
  resume(fixture.controlPlane.child.pid)
  await fixture.stop()
}

/** What a scenario runs on: the fixture, one api with its keys, and a place to register what to stop. */
export interface Stage {
  fixture: KeygateFixture
  apiId: string
  keys: { keyId: string; key: string }[]
  /** Stopped when the scenario ends, the last registered first, then the fixture. */
  onStop: (stop: () => Promise<unknown>) => void
}

/**
 * Runs a scenario on a fresh fixture with `keyCount` keys in one api (each created with `keyFields`), and stops
 * everything after, whatever happens.
 */
export async function onStage<T>(
  keyCount: number,
  run: (stage: Stage) => Promise<T>,
  keyFields: Record<string, unknown> = {},
): Promise<T> {
  const fixture = await startKeygateFixture()
  const stops: (() => Promise<unknown>)[] = []
  try {
    progress(`creating ${keyCount.toLocaleString('en-US')} keys`)
    const apiId = await fixture.createApi('bench')
    const keys = await fixture.createKeys(apiId, keyCount, 32, keyFields)
    return await run({ fixture, apiId, keys, onStop: (stop) => stops.unshift(stop) })
  } finally {
    for (const stop of stops) await stop()
    await fixture.stop()
  }
}
