import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import type { VerifierConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import { createLogger } from '../shared/logger.js'
import { openRedisBackend } from '../shared/store/redis-backend.js'
import { redactUrl } from '../shared/store/redis-connection.js'
import { buildVerifierApp } from './app.js'
import { KeyVerifier } from './key-verifier.js'
import { createReverseProxy } from './proxy-server.js'

/** `keygate verifier`: the sidecar. Listens at once; /readyz turns 200 once subscribed and synced. */
export async function startVerifier(config: VerifierConfig, log: Logger = createLogger(config.logLevel, 'verifier')): Promise<KeygateServer> {
  const { store, feed, close } = openRedisBackend(config.redisUrl, 'verifier', config.redisTarget)
  const metrics = createMetricsRegistry('verifier')
  const verifier = new KeyVerifier({ store, feed, clock: systemClock, elapsed: monotonicClock, log, registry: metrics.registry, cache: config.cache, sync: config.sync })
  const app = buildVerifierApp({ verifier, store, log, metrics, bodyLimitBytes: config.bodyLimitBytes, docsBaseUrl: config.docsBaseUrl, gateway: config.gateway })
  const proxy = config.proxy && createReverseProxy({
    verifier, policy: config.gateway, log: log.child({ component: 'proxy' }), registry: metrics.registry,
    options: { ...config.proxy, docsBaseUrl: config.docsBaseUrl },
  })
  app.addHook('onClose', async () => {
    await proxy?.close()
    verifier.stop()
    await close()
  })
  verifier.start().catch((err) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  if (proxy && config.proxy) {
    // The proxy listens before /readyz turns 200; until then it reads keys through (or answers 503).
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject)
      proxy.server.listen(config.proxy!.port, config.host, () => resolve())
    })
    log.info({ upstream: config.proxy.upstreamUrl, port: config.proxy.port }, 'reverse proxy listening')
  }
  await app.listen({ port: config.port, host: config.host })
  log.info({ redis: redactUrl(config.redisUrl) }, 'verifier started')
  return app
}
