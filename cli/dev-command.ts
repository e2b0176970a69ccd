import type { Logger } from 'pino'
import { randomBytes } from 'node:crypto'
import { monotonicClock, systemClock } from '../shared/clock.js'
import { devConfig, type DevConfig } from '../shared/config/config.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { closeGracefully } from '../shared/http/graceful-shutdown.js'
import { generateRootKey } from '../shared/keys/key-material.js'
import { createLogger } from '../shared/logger.js'
import { openBackend } from '../shared/store/backend.js'
import { assembleControlPlane } from './assemble-control-plane.js'
import { openAnalytics } from './open-analytics.js'
import { readableLogLines } from './dev-log-lines.js'
import { listenApp } from './listen.js'

interface DevServer {
  app: KeygateServer
  url: string
  /** The root key to use: KEYGATE_ROOT_KEY, or one made for this run. */
  rootKey: string
  rootKeyGenerated: boolean
  /** WEBHOOK_ALLOW_PRIVATE, on unless turned off: a receiver on this machine is what a local tool is tried with. */
  webhooksToPrivate: boolean
}

/**
 * `keygate dev`: control plane and verifier endpoints in one process over the in-memory store and feed.
 * No Redis; everything is gone when it exits.
 */
async function startDev(config: DevConfig, log: Logger): Promise<DevServer> {
  const backend = openBackend({ kind: 'memory' })
  const rootKey = config.rootKey ?? generateRootKey().key
  // Always the embedded engine: dev keeps everything in its process.
  const analytics = await openAnalytics({ directory: config.analyticsDir }, log)
  const { app, verifier } = assembleControlPlane(
    {
      store: backend.store,
      feed: backend.feed,
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
      bootstrapRootKey: rootKey,
      managementRateLimit: config.managementRateLimit,
      webhookPolicy: config.webhooks,
      secretScanningKeysUrl: config.secretScanningKeysUrl,
      // Dev keeps nothing past its run: a key made for it seals what it keeps, unless one is configured.
      sealingKeys: config.sealingKeys ?? [{ id: 'dev', key: randomBytes(32) }],
      portalUrl: config.portalUrl,
      // Forward-auth next to the management API: only in dev.
      gateway: config.gateway,
      service: 'dev',
      recording: { region: config.region, maxBufferBytes: config.analyticsBufferBytes },
      analytics,
    },
  )
  await verifier.start()
  try {
    await listenApp(app, config.port, config.host, 'PORT (--port)')
  } catch (err) {
    await app.close()
    throw err
  }
  const address = app.server.address()
  const port = typeof address === 'object' && address ? address.port : config.port
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
  return {
    app,
    url,
    rootKey,
    rootKeyGenerated: config.rootKey === undefined,
    webhooksToPrivate: config.webhooks.allowPrivateAddresses,
  }
}

export async function run(argv: string[], env: NodeJS.ProcessEnv): Promise<'serving'> {
  const config = devConfig(argv, env)
  const lines = readableLogLines(process.stdout)
  const log = createLogger(config.logLevel, 'dev', lines)
  process.stdout.write('Starting the dev server (control plane and verifier in one process, in memory) …\n')
  const dev = await startDev(config, log)
  closeGracefully(log, config.shutdownGraceMs, config.shutdownDelayMs, dev.app)
  process.stdout.write(banner(dev))
  lines.startedUp()
  return 'serving'
}

/** What `keygate dev` prints once it listens: where it is, the root key, and a first call that works as printed. */
function banner(dev: DevServer): string {
  const firstCall =
    `  curl -s -X POST $KG/v1/apis.createApi -H "Authorization: Bearer $ROOT_KEY" ` +
    `-H 'Content-Type: application/json' -d '{"name":"my-api"}'\n\n`
  const header =
    `\nKeygate dev server (in-memory store, no Redis; data is lost on exit)\n` +
    `  URL:      ${dev.url}\n` +
    `  API docs: ${dev.url}/docs\n` +
    `  console:  ${dev.url}/console (sign in with the root key)\n` +
    `  root key: ${dev.rootKeyGenerated ? dev.rootKey : '(from KEYGATE_ROOT_KEY)'}\n` +
    `  webhooks: ${
      dev.webhooksToPrivate
        ? 'private addresses allowed (localhost, 127.0.0.1, 10.x…; --no-webhook-allow-private to refuse them)'
        : 'public addresses only (private ones refused)'
    }\n\n`
  // A generated root key is printed: this run made it.
  if (dev.rootKeyGenerated)
    return `${header}Try it from another terminal:\n  export KG=${dev.url} ROOT_KEY=${dev.rootKey}\n${firstCall}`
  // KEYGATE_ROOT_KEY never is, and another terminal lacks it (so may the shell that started this one:
  // `KEYGATE_ROOT_KEY=… npm start`): the line asks for it, unechoed. Alone, since read would take the next pasted
  // line as the key; printf and read -rs rather than read -p, which zsh reads otherwise.
  return (
    `${header}Try it from another terminal: paste this line alone, then type the KEYGATE_ROOT_KEY ` +
    `keygate dev was started with\n` +
    `  printf 'root key (not shown): '; read -rs ROOT_KEY; echo; export KG=${dev.url} ROOT_KEY\n` +
    `then:\n${firstCall}`
  )
}
