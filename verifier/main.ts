import type { Logger } from 'pino'
import { systemClock } from '../shared/clock.js'
import type { VerifierConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import { createLogger } from '../shared/logger.js'
import { openRedisBackend } from '../shared/store/redis-backend.js'
import { redactUrl } from '../shared/store/redis-connection.js'
import { buildVerifierApp } from './app.js'
import { KeyVerifier } from './key-verifier.js'

/** `keygate verifier`: the sidecar. Listens at once; /readyz turns 200 once subscribed and synced. */
export async function startVerifier(config: VerifierConfig, log: Logger = createLogger(config.logLevel, 'verifier')): Promise<KeygateServer> {
  const { store, feed, close } = openRedisBackend(config.redisUrl, 'verifier')
  const metrics = createMetricsRegistry('verifier')
  const verifier = new KeyVerifier({ store, feed, clock: systemClock, log, registry: metrics.registry, cache: config.cache, sync: config.sync })
  const app = buildVerifierApp({ verifier, store, log, metrics, bodyLimitBytes: config.bodyLimitBytes, docsBaseUrl: config.docsBaseUrl, gateway: config.gateway })
  app.addHook('onClose', async () => {
    verifier.stop()
    await close()
  })
  verifier.start().catch((err) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  await app.listen({ port: config.port, host: config.host })
  log.info({ redis: redactUrl(config.redisUrl) }, 'verifier started')
  return app
}
