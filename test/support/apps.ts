import { pino, type Logger } from 'pino'
import { Writable } from 'node:stream'
import { buildControlPlaneApp } from '../../control-plane/app.js'
import { monotonicClock, type Clock } from '../../shared/clock.js'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { RedisChangeFeed } from '../../shared/feed/redis-change-feed.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { createMetricsRegistry } from '../../shared/http/metrics-registry.js'
import { loggerOptions } from '../../shared/logger.js'
import type { KeyStore } from '../../shared/store/key-store.js'
import { MemoryKeyStore } from '../../shared/store/memory-key-store.js'
import { openRedis } from '../../shared/store/redis-connection.js'
import { RedisKeyStore } from '../../shared/store/redis-key-store.js'
import { buildVerifierApp } from '../../verifier/app.js'
import type { SyncSettings } from '../../shared/config/settings.js'
import { KeyVerifier } from '../../verifier/key-verifier.js'
import type { GatewayPolicy } from '../../shared/config/settings.js'

export const TEST_ROOT_KEY = 'test-root-key-0123456789abcdef'

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.ms
  }
  advance(ms: number) {
    this.ms += ms
  }
}

/** Every log line a server wrote, as text: tests scan it for secrets. */
export function capturedLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done() } })
  return { log: pino({ ...loggerOptions('trace', 'test') }, sink), lines }
}

export interface Backend {
  store: KeyStore
  feed: ChangeFeed
  close(): Promise<void>
}

/** A store and feed of either kind; `redisUrl` selects Redis. */
export async function openBackend(redisUrl?: string): Promise<Backend> {
  if (!redisUrl) {
    const feed = new MemoryChangeFeed()
    return { store: new MemoryKeyStore(feed), feed, close: () => feed.close() }
  }
  const store = new RedisKeyStore(await openRedis(redisUrl, 'test'))
  const feed = new RedisChangeFeed(await openRedis(redisUrl, 'test-changes', { autoResubscribe: false }))
  return { store, feed, close: async () => { await feed.close(); await store.close() } }
}

export interface TestServer {
  app: KeygateServer
  verifier: KeyVerifier
  backend: Backend
  close(): Promise<void>
}

const cache = { maxKeys: 10_000, maxUnknown: 1_000, unknownTtlMs: 10_000 }
export const DEFAULT_SYNC: SyncSettings = { maxStalenessMs: 5_000, pollIntervalMs: 1_000, onStale: 'read-through' }

export interface TestServerOptions {
  redisUrl?: string
  backend?: Backend
  log?: Logger
  clock?: Clock
  sync?: Partial<SyncSettings>
  gateway?: Partial<GatewayPolicy>
  managementRateLimit?: number
}

/** A control plane (with its verifyKey) on its own store connection, ready to inject into. */
export async function startTestControlPlane(options: TestServerOptions = {}): Promise<TestServer> {
  const backend = options.backend ?? (await openBackend(options.redisUrl))
  const log = options.log ?? pino({ level: 'silent' })
  const clock = options.clock ?? { now: () => Date.now() }
  const metrics = createMetricsRegistry('control-plane')
  const verifier = new KeyVerifier({ store: backend.store, feed: backend.feed, clock, elapsed: options.clock ?? monotonicClock, log, registry: metrics.registry, cache, sync: { ...DEFAULT_SYNC, ...options.sync } })
  await verifier.start()
  const app = buildControlPlaneApp({
    store: backend.store, verifier, clock, log, metrics, bootstrapRootKey: TEST_ROOT_KEY, bodyLimitBytes: 1_048_576,
    docsBaseUrl: 'https://keygate.dev/docs', managementRateLimit: options.managementRateLimit,
  })
  await app.ready()
  return { app, verifier, backend, close: async () => { verifier.stop(); await app.close(); if (!options.backend) await backend.close() } }
}

/** A verifier on its own store connection and feed subscription. */
export async function startTestVerifier(options: TestServerOptions = {}): Promise<TestServer> {
  const backend = options.backend ?? (await openBackend(options.redisUrl))
  const log = options.log ?? pino({ level: 'silent' })
  const metrics = createMetricsRegistry('verifier')
  const verifier = new KeyVerifier({ store: backend.store, feed: backend.feed, clock: options.clock ?? { now: () => Date.now() }, elapsed: options.clock ?? monotonicClock, log, registry: metrics.registry, cache, sync: { ...DEFAULT_SYNC, ...options.sync } })
  await verifier.start()
  const app = buildVerifierApp({ verifier, store: backend.store, log, metrics, bodyLimitBytes: 1_048_576, docsBaseUrl: 'https://keygate.dev/docs', gateway: { keyHeader: 'x-api-key', cost: 1, ...options.gateway } })
  await app.ready()
  return { app, verifier, backend, close: async () => { verifier.stop(); await app.close(); if (!options.backend) await backend.close() } }
}
