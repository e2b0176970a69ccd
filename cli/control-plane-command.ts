import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import { controlPlaneConfig, type ControlPlaneConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { openBackend, redisConnections } from '../shared/store/backend.js'
import { redactUrl } from '../shared/store/redis/redis-connection.js'
import { listenApp } from './listen.js'
import { serve } from './serve.js'
import { assembleControlPlane } from './assemble-control-plane.js'
import { openAnalytics, type OpenedAnalytics } from './open-analytics.js'

/** `keygate control-plane`: the management API on Redis. Listens at once; /readyz says when it can serve. */
export async function startControlPlane(config: ControlPlaneConfig, log: Logger): Promise<KeygateServer> {
  const backend = openBackend({
    kind: 'redis',
    connections: redisConnections(config.redisUrl, 'control-plane', config.redisTarget),
    replication: config.replication,
  })
  const { store, feed } = backend
  let analytics: OpenedAnalytics
  try {
    analytics = await openAnalytics({ directory: config.analyticsDir, clickhouse: config.clickhouse }, log)
  } catch (err) {
    await backend.close()
    // The server's errors never say its URL's password (clickhouse-server-engine.ts), nor does this.
    const where =
      config.clickhouse === undefined
        ? `on ANALYTICS_DIR ${config.analyticsDir}`
        : 'for CLICKHOUSE_URL (--clickhouse-url)'
    throw new Error(`the analytics engine could not be opened ${where}: ${String(err)}`, { cause: err })
  }
  const { app, verifier } = assembleControlPlane(
    {
      store,
      feed,
      clock: systemClock,
      elapsed: monotonicClock,
      log,
      closeBackend: async () => {
        await backend.close()
        await analytics.engine.close()
      },
    },
    {
      bodyLimitBytes: config.bodyLimitBytes,
      docsBaseUrl: config.docsBaseUrl,
      cache: config.cache,
      sync: config.sync,
      clientAddress: config.clientAddress,
      bootstrapRootKey: config.rootKey,
      managementRateLimit: config.managementRateLimit,
      webhookPolicy: config.webhooks,
      secretScanningKeysUrl: config.secretScanningKeysUrl,
      sealingKeys: config.sealingKeys,
      portalUrl: config.portalUrl,
      recording: { region: config.region, maxBufferBytes: config.analyticsBufferBytes },
      analytics,
    },
  )
  verifier.start().catch((err: unknown) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  try {
    await listenApp(app, config.port, config.host, 'PORT (--port)')
  } catch (err) {
    await app.close()
    throw err
  }
  log.info(
    { redis: redactUrl(config.redisUrl), bootstrapRootKey: config.rootKey !== undefined, analytics: analytics.about },
    'control plane started',
  )
  return app
}

export function run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving'> {
  return serve('control-plane', controlPlaneConfig(argv, env), startControlPlane)
}
