import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import { verifierConfig, type VerifierConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { openBackend, redisConnections } from '../shared/store/backend.js'
import { redactUrl } from '../shared/store/redis/redis-connection.js'
import { listenApp, listenServer } from './listen.js'
import { serve } from './serve.js'
import { assembleVerifier } from './assemble-verifier.js'

/** `keygate verifier`: the sidecar. Listens at once; /readyz turns 200 once subscribed and synced. */
export async function startVerifier(config: VerifierConfig, log: Logger): Promise<KeygateServer> {
  const backend = openBackend({
    kind: 'redis',
    connections: redisConnections(config.redisUrl, 'verifier', config.redisTarget),
  })
  const { store, feed } = backend
  const { app, verifier, proxy } = await assembleVerifier(
    { store, feed, clock: systemClock, elapsed: monotonicClock, log, closeBackend: () => backend.close() },
    {
      bodyLimitBytes: config.bodyLimitBytes,
      docsBaseUrl: config.docsBaseUrl,
      bootstrapRootKey: config.rootKey,
      cache: config.cache,
      sync: config.sync,
      clientAddress: config.clientAddress,
      gateway: config.gateway,
      proxy: config.proxy,
      recording: { region: config.region, maxBufferBytes: config.analyticsBufferBytes },
    },
  )
  verifier.start().catch((err: unknown) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  // Both ports are taken before anything is announced: a taken one stops the start with the option to change.
  try {
    if (proxy && config.proxy)
      await listenServer(proxy.server, config.proxy.port, config.host, 'PROXY_PORT (--proxy-port)')
    await listenApp(app, config.port, config.host, 'PORT (--port)')
  } catch (err) {
    await app.close()
    throw err
  }
  // The proxy listens before /readyz turns 200; until then it reads keys through (or answers 503).
  if (config.proxy) log.info({ upstream: config.proxy.upstreamUrl, port: config.proxy.port }, 'reverse proxy listening')
  log.info({ redis: redactUrl(config.redisUrl) }, 'verifier started')
  return app
}

export function run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving'> {
  return serve('verifier', verifierConfig(argv, env), startVerifier)
}
