import { afterAll, beforeAll, describe } from 'vitest'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { useAnalyticsEngine } from './analytics-engine.js'
import {
  ingestAnalytics,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type ManualClock,
  type TestServer,
} from './apps.js'
import { startRedisServer, type RedisServer } from './redis-server.js'

export const ADMIN_HEADERS: Record<string, string> = {
  authorization: `Bearer ${TEST_ROOT_KEY}`,
  'content-type': 'application/json',
}
export const JSON_ONLY: Record<string, string> = { 'content-type': 'application/json' }

export interface StoreStack {
  store: 'memory' | 'redis'
  /** The redis-server's URL (both stacks: the memory one's tests may read Redis only when `store` is redis). */
  redisUrl: string
  clock: ManualClock | undefined
  backend: Backend
  controlPlane: TestServer
  /** A verifier of its own (on Redis: its own connections and cache, as a sidecar). */
  verifier: TestServer
  /** POST to the control plane (or `server`) as the bootstrap root key (or with `auth`). */
  post: (
    path: string,
    payload: object | string,
    server?: TestServer,
    auth?: Record<string, string>,
  ) => Promise<{ status: number; body: any }>
  /** keys.verifyKey on the verifier. */
  verify: (payload: object) => Promise<any>
  /** keys.getKey on the control plane, as the root key. */
  getKey: (keyId: string) => Promise<any>
  /**
   * With `analytics`: makes every verification answered so far queryable (both verifiers hand their rows over, the
   * control plane ingests them into the file's engine).
   */
  ingestAnalytics: () => Promise<void>
  /** With `analytics`: the file's engine (shared by both stacks). */
  engine: AnalyticsEngine | undefined
}

/**
 * Defines the same tests once per store — memory and a fresh redis-server — each with a control plane and a
 * separate verifier, so every rule is shown through the verifier on both implementations.
 */
export function onBothStores(
  title: string,
  options: { clock?: () => ManualClock; analytics?: boolean },
  define: (stack: StoreStack) => void,
): void {
  // One engine for the file (chDB's one per process): the stacks' control planes each ingest their store into it.
  const analytics = options.analytics === true ? useAnalyticsEngine() : undefined
  let redis: RedisServer | undefined
  beforeAll(async () => {
    redis = await startRedisServer()
  })
  afterAll(async () => {
    await redis?.stop()
  })
  for (const store of ['memory', 'redis'] as const) {
    describe(`${title} on the ${store} store`, () => {
      const stack = { store, clock: options.clock?.() } as StoreStack
      stack.post = async (path, payload, server = stack.controlPlane, auth = ADMIN_HEADERS) => {
        const response = await server.app.inject({ method: 'POST', url: `/v1/${path}`, headers: auth, payload })
        return { status: response.statusCode, body: response.json() }
      }
      stack.verify = async (payload) => (await stack.post('keys.verifyKey', payload, stack.verifier, JSON_ONLY)).body
      stack.ingestAnalytics = () => ingestAnalytics(stack.controlPlane, stack.verifier)
      Object.defineProperty(stack, 'engine', { get: () => analytics?.engine })
      stack.getKey = async (keyId) =>
        (
          await stack.controlPlane.app.inject({
            method: 'GET',
            url: `/v1/keys.getKey?keyId=${keyId}`,
            headers: ADMIN_HEADERS,
          })
        ).json()
      beforeAll(async () => {
        stack.redisUrl = redis!.url
        stack.backend = await openBackend(store === 'redis' ? redis!.url : undefined)
        stack.controlPlane = await startTestControlPlane({
          backend: stack.backend,
          clock: stack.clock,
          analytics: analytics?.analytics(`control-plane-${store}`),
        })
        stack.verifier = await startTestVerifier(
          store === 'redis'
            ? { redisUrl: redis!.url, clock: stack.clock }
            : { backend: stack.backend, clock: stack.clock },
        )
      })
      afterAll(async () => {
        await stack.verifier.close()
        await stack.controlPlane.close()
        await stack.backend.close()
      })
      define(stack)
    })
  }
}
