import type { Logger } from 'pino'
import type { Clock } from '../shared/clock.js'
import type {
  GatewayPolicy,
  CacheSettings,
  ClientAddressSettings,
  ProxySettings,
  SyncSettings,
} from '../shared/config/settings.js'
import type { ChangeFeed } from '../shared/feed/change-feed.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import type { VerifierStore } from '../shared/store/verifier-store.js'
import { buildVerifierApp } from '../verifier/app.js'
import { KeyVerifier, type RecordingSettings } from '../verifier/key-verifier.js'
import { NamespaceLimiter } from '../verifier/namespace-limiter.js'
import { NamespaceRatelimits } from '../verifier/namespace-ratelimits.js'
import type { ReverseProxy } from '../verifier/proxy-server.js'

/** What a process is assembled on. Whoever opened the store and feed (a command, a test) closes them. */
export interface ProcessParts<Store> {
  store: Store
  feed: ChangeFeed
  /** Wall clock, for expiry and rate-limit windows. */
  clock: Clock
  /** Monotonic clock, for the staleness bound. */
  elapsed: Clock
  log: Logger
  /**
   * Closes the store and feed (the command's own connections), called once the process's work has stopped: the
   * last analytics rows are handed over first. A test sharing one store between servers leaves it out.
   */
  closeBackend?: () => Promise<void>
}

export interface VerifierSettings {
  bodyLimitBytes: number
  docsBaseUrl: string
  /** KEYGATE_ROOT_KEY: accepted by v2's keys.verifyKey, as the control plane accepts it, unless turned off. */
  bootstrapRootKey?: string | undefined
  cache: CacheSettings
  sync: SyncSettings
  /** Which address a request is from, for allow-lists (default: the socket's). */
  clientAddress?: ClientAddressSettings | undefined
  gateway: GatewayPolicy
  /** Reverse-proxy mode. */
  proxy?: ProxySettings | undefined
  /** How verifications are recorded for analytics (default: key-verifier.ts, defaultRecording). */
  recording?: Partial<RecordingSettings> | undefined
}

export interface AssembledVerifier {
  /** verifyKey, ratelimits.limit, /v1/authorize, health and metrics. Not listening yet. */
  app: KeygateServer
  verifier: KeyVerifier
  /** ratelimits.limit's core; counts async calls from the app's start to its close. */
  ratelimits: NamespaceRatelimits
  /** Reverse-proxy mode: its server, not listening yet. */
  proxy: ReverseProxy | undefined
}

/**
 * The verifier sidecar, wired: the key verifier on the store and feed, its HTTP app, and the reverse proxy
 * when configured. Nothing is started: the caller starts the verifier's sync and listens. Closing the app
 * closes the proxy, stops the verifier (handing its last analytics rows over), then closes the backend.
 */
export async function assembleVerifier(
  parts: ProcessParts<VerifierStore>,
  settings: VerifierSettings,
): Promise<AssembledVerifier> {
  const { store, log } = parts
  // Only in reverse-proxy mode: without it a verifier never loads the proxy's modules (undici among them), so its heap
  // is smaller, and its major collections grow with its heap.
  const proxyServer = settings.proxy ? await import('../verifier/proxy-server.js') : undefined
  const metrics = createMetricsRegistry('verifier')
  const verifier = keyVerifierOf(parts, settings, metrics.registry)
  const ratelimits = namespaceRatelimitsOf(parts, settings, verifier)
  const app = buildVerifierApp({
    verifier,
    ratelimits,
    store,
    log,
    metrics,
    bodyLimitBytes: settings.bodyLimitBytes,
    docsBaseUrl: settings.docsBaseUrl,
    gateway: settings.gateway,
    bootstrapRootKey: settings.bootstrapRootKey,
  })
  const proxy =
    settings.proxy && proxyServer
      ? proxyServer.createReverseProxy({
          verifier,
          policy: settings.gateway,
          log: log.child({ component: 'proxy' }),
          registry: metrics.registry,
          options: { ...settings.proxy, docsBaseUrl: settings.docsBaseUrl },
        })
      : undefined
  app.addHook('onReady', async () => ratelimits.start())
  // One hook, in order: Fastify runs onClose hooks last-registered first, so a second one would run before this.
  app.addHook('onClose', async () => {
    await proxy?.close()
    await ratelimits.stop()
    await verifier.stop()
    await parts.closeBackend?.()
  })
  return { app, verifier, ratelimits, proxy }
}

/** The one place a KeyVerifier is made, for the verifier and for the control plane's own verifyKey. */
export function keyVerifierOf(
  parts: ProcessParts<VerifierStore>,
  settings: Pick<VerifierSettings, 'cache' | 'sync' | 'clientAddress' | 'recording'>,
  registry: ReturnType<typeof createMetricsRegistry>['registry'],
): KeyVerifier {
  const { store, feed, clock, elapsed, log } = parts
  const { cache, sync, clientAddress, recording } = settings
  return new KeyVerifier({ store, feed, clock, elapsed, log, registry, cache, sync, clientAddress, recording })
}

/**
 * The one place ratelimits.limit's core is made, for the verifier and for the control plane: on the process's key
 * verifier (its entity cache, its clock), async calls reconciled every poll interval as keys' async limits are.
 */
export function namespaceRatelimitsOf(
  parts: ProcessParts<VerifierStore>,
  settings: Pick<VerifierSettings, 'sync'>,
  verifier: KeyVerifier,
): NamespaceRatelimits {
  const limiter = new NamespaceLimiter(
    parts.store.counters,
    parts.log.child({ component: 'namespace-limiter' }),
    settings.sync.pollIntervalMs,
    parts.clock,
  )
  return new NamespaceRatelimits(verifier, limiter, parts.clock, parts.store.entities, verifier.recorder)
}
