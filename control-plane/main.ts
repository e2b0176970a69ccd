import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import type { ControlPlaneConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import { createLogger } from '../shared/logger.js'
import { openRedisBackend } from '../shared/store/redis-backend.js'
import { redactUrl } from '../shared/store/redis-connection.js'
import { KeyVerifier } from '../verifier/key-verifier.js'
import { buildControlPlaneApp } from './app.js'

/** `keygate control-plane`: the management API on Redis. Listens at once; /readyz says when it can serve. */
export async function startControlPlane(config: ControlPlaneConfig, log: Logger = createLogger(config.logLevel, 'control-plane')): Promise<KeygateServer> {
  const { store, feed, close } = openRedisBackend(config.redisUrl, 'control-plane', config.redisTarget, config.replication)
  const metrics = createMetricsRegistry('control-plane')
  const verifier = new KeyVerifier({ store, feed, clock: systemClock, elapsed: monotonicClock, log, registry: metrics.registry, cache: config.cache, sync: config.sync })
  const app = buildControlPlaneApp({
    store, verifier, clock: systemClock, log, metrics, bootstrapRootKey: config.rootKey,
    bodyLimitBytes: config.bodyLimitBytes, docsBaseUrl: config.docsBaseUrl, managementRateLimit: config.managementRateLimit,
  })
  app.addHook('onClose', async () => {
    verifier.stop()
    await close()
  })
  verifier.start().catch((err) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  await app.listen({ port: config.port, host: config.host })
  log.info({ redis: redactUrl(config.redisUrl), bootstrapRootKey: config.rootKey !== undefined }, 'control plane started')
  return app
}
