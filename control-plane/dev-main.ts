import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import type { DevConfig } from '../shared/config/config.js'
import { MemoryChangeFeed } from '../shared/feed/memory-change-feed.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import { generateRootKey } from '../shared/key-material.js'
import { createLogger } from '../shared/logger.js'
import { MemoryKeyStore } from '../shared/store/memory-key-store.js'
import { KeyVerifier } from '../verifier/key-verifier.js'
import { buildControlPlaneApp } from './app.js'

export interface DevServer {
  app: KeygateServer
  url: string
  /** The root key to use: KEYGATE_ROOT_KEY, or one made for this run. */
  rootKey: string
  rootKeyGenerated: boolean
}

/**
 * `keygate dev`: control plane and verifier endpoints in one process over the in-memory store and feed.
 * No Redis; everything is gone when it exits.
 */
export async function startDev(config: DevConfig, log: Logger = createLogger(config.logLevel, 'dev')): Promise<DevServer> {
  const feed = new MemoryChangeFeed()
  const store = new MemoryKeyStore(feed)
  const metrics = createMetricsRegistry('dev')
  const verifier = new KeyVerifier({ store, feed, clock: systemClock, elapsed: monotonicClock, log, registry: metrics.registry, cache: config.cache, sync: config.sync })
  await verifier.start()
  const rootKey = config.rootKey ?? generateRootKey().key
  const app = buildControlPlaneApp({
    store, verifier, clock: systemClock, log, metrics, bootstrapRootKey: rootKey,
    bodyLimitBytes: config.bodyLimitBytes, docsBaseUrl: config.docsBaseUrl, gateway: config.gateway,
    managementRateLimit: config.managementRateLimit,
  })
  app.addHook('onClose', async () => {
    verifier.stop()
    await feed.close()
    await store.close()
  })
  await app.listen({ port: config.port, host: config.host })
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  return { app, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`, rootKey, rootKeyGenerated: config.rootKey === undefined }
}
