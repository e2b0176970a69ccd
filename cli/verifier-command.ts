import type { Logger } from 'pino'
import { monotonicClock, systemClock } from '../shared/clock.js'
import { verifierConfig, type VerifierConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/build-server.js'
import { openRedisBackend } from '../shared/store/redis-backend.js'
import { redactUrl } from '../shared/store/redis-connection.js'
import { serve } from './serve.js'
import { assembleVerifier } from './assemble-verifier.js'

/** `keygate verifier`: the sidecar. Listens at once; /readyz turns 200 once subscribed and synced. */
export async function startVerifier(config: VerifierConfig, log: Logger): Promise<KeygateServer> {
  const backend = openRedisBackend(config.redisUrl, 'verifier', config.redisTarget)
  const { store, feed } = backend
  const { app, verifier, proxy } = assembleVerifier(
    { store, feed, clock: systemClock, elapsed: monotonicClock, log, closeBackend: () => backend.close() },
    {
      bodyLimitBytes: config.bodyLimitBytes,
      docsBaseUrl: config.docsBaseUrl,
      cache: config.cache,
      sync: config.sync,
      gateway: config.gateway,
      proxy: config.proxy,
    },
  )
  verifier.start().catch((err: unknown) => log.warn({ err }, 'Redis not reachable yet; will sync when it is'))
  if (proxy && config.proxy) {
    const { port, upstreamUrl } = config.proxy
    // The proxy listens before /readyz turns 200; until then it reads keys through (or answers 503).
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject)
      proxy.server.listen(port, config.host, () => resolve())
    })
    log.info({ upstream: upstreamUrl, port }, 'reverse proxy listening')
  }
  await app.listen({ port: config.port, host: config.host })
  log.info({ redis: redactUrl(config.redisUrl) }, 'verifier started')
  return app
}

export function run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving'> {
  return serve('verifier', verifierConfig(argv, env), startVerifier)
}
