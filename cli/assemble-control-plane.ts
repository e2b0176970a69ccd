import type { CacheSettings, ClientAddressSettings, GatewayPolicy, SyncSettings } from '../shared/config/settings.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { registerIndex, type ServerIndex } from '../shared/http/index-route.js'
import { createMetricsRegistry } from '../shared/http/metrics-registry.js'
import type { Registry } from 'prom-client'
import type { Store } from '../shared/store/store.js'
import { buildControlPlaneApp } from '../control-plane/app.js'
import { builtConsoleDir, loadConsole } from '../control-plane/pages/console-route.js'
import { builtPageDir, loadBuiltPage } from '../control-plane/pages/built-page.js'
import { RootKeyUse } from '../control-plane/root-keys/root-key-use.js'
import { registerAuthorize } from '../verifier/authorize-route.js'
import type { KeyVerifier } from '../verifier/key-verifier.js'
import type { NamespaceRatelimits } from '../verifier/namespace-ratelimits.js'
import { verifyKeyRoute } from '../verifier/verify-key-route.js'
import { v2VerifyKeyRoute } from '../verifier/v2-verify-key-route.js'
import { StoredRootKeys } from '../control-plane/root-keys/stored-root-keys.js'
import { serveRoutes } from '../shared/http/route.js'
import { RootKeyAuthenticator } from '../shared/root-keys/root-key-authenticator.js'
import type { HostLookup } from '../control-plane/webhooks/delivery/address-policy.js'
import { keyVerifierOf, namespaceRatelimitsOf, type ProcessParts } from './assemble-verifier.js'
import { DeliveryWorker } from '../control-plane/webhooks/delivery/delivery-worker.js'
import { EndpointSender } from '../control-plane/webhooks/delivery/endpoint-sender.js'
import { EventDeriver } from '../control-plane/webhooks/events/event-deriver.js'
import { tapChangeFeed } from '../shared/feed/tapped-change-feed.js'
import { createWebhookMetrics } from '../control-plane/webhooks/webhook-metrics.js'
import { DEFAULT_WEBHOOK_POLICY, type WebhookPolicy } from '../control-plane/webhooks/webhook-policy.js'
import { PublishedSigningKeys } from '../control-plane/leaks/github-public-keys.js'
import type { ReportReadLimits } from '../control-plane/leaks/unverified-report-reads.js'
import { hostname } from 'node:os'
import type { AnalyticsEngine } from '../control-plane/analytics/engine/analytics-engine.js'
import { AnalyticsIngest } from '../control-plane/analytics/ingest/analytics-ingest.js'
import { moveUsageCounters } from '../control-plane/analytics/ingest/move-usage-counters.js'
import { namespaceAddress, type NamespaceRecord } from '../shared/ratelimits/ratelimit-namespace.js'
import type { RecordingSettings } from '../verifier/key-verifier.js'
import { randomBytes } from 'node:crypto'
import { SecretBox, type SealingKey } from '../shared/secrets/secret-box.js'
import { MeterExports } from '../control-plane/webhooks/exports/meter-exports.js'
import { ApiSettingsRecords } from '../control-plane/apis/api-settings.js'
import { UsageEvents, usageEventMarks } from '../control-plane/webhooks/usage/usage-events.js'
import { UsageAlerts } from '../control-plane/webhooks/usage/usage-alerts.js'
import { identityAddress, type IdentityRecord } from '../shared/identity.js'

export interface ControlPlaneSettings {
  bodyLimitBytes: number
  docsBaseUrl: string
  cache: CacheSettings
  sync: SyncSettings
  /** Which address a request is from, for allow-lists on its verifyKey (default: the socket's). */
  clientAddress?: ClientAddressSettings | undefined
  /** KEYGATE_ROOT_KEY: a root key with every permission, compared by hash. */
  bootstrapRootKey: string | undefined
  /** Management calls per root key per minute (0 or absent: no limit). */
  managementRateLimit?: number | undefined
  /** `keygate dev` only: forward-auth (/v1/authorize) next to the management API. */
  gateway?: GatewayPolicy | undefined
  /** The `service` label of its metrics. */
  service?: 'control-plane' | 'dev'
  /** What operators allow of webhook endpoints (default: DEFAULT_WEBHOOK_POLICY). */
  webhookPolicy?: WebhookPolicy | undefined
  /** Where the admin console was built (default: this package's dist/console). */
  consoleDir?: URL
  /** Where the customer portal's page was built (default: this package's dist/portal). */
  portalPageDir?: URL
  /** How webhook endpoints' hosts are resolved (default: DNS); tests resolve names of their own. */
  hostLookup?: HostLookup | undefined
  /** Where the keys that sign GitHub's leak reports are published (absent: /v1/secret-scanning/github not served). */
  secretScanningKeysUrl?: string | undefined
  /** How leak report bodies are read before their signature is checked (default: DEFAULT_REPORT_READ_LIMITS). */
  leakReportReads?: ReportReadLimits | undefined
  /** Where customers reach the portal page (portal.createSession's URL). */
  portalUrl?: string | undefined
  /** How its own verifier records verifications for analytics (default: key-verifier.ts, defaultRecording). */
  recording?: Partial<RecordingSettings> | undefined
  /**
   * The analytics engine it ingests the store's analytics buffers into and answers analytics queries on, and who it is
   * for the ingest's lease (absent: it ingests nothing, and analytics queries answer 412). Whoever opened the engine
   * closes it, after the app.
   */
  analytics?: { engine: AnalyticsEngine; holder: string } | undefined
  /** The keys that seal secrets kept in the store (ENCRYPTION_KEYS); absent: meter exports cannot be made. */
  sealingKeys?: SealingKey[] | undefined
}

export interface AssembledControlPlane {
  /** The management API, keys.verifyKey, health and metrics. Not listening yet. */
  app: KeygateServer
  /** Answers the control plane's keys.verifyKey; told of each write the control plane makes. */
  verifier: KeyVerifier
  /** ratelimits.limit's core; counts async calls from the app's start to its close. */
  ratelimits: NamespaceRatelimits
  /** The analytics ingest, when it has an engine: started with the app (ingestNow() runs a pass at once). */
  ingest: AnalyticsIngest | undefined
}

/** `GET /` of a control plane or `keygate dev`: the console for a browser, else where everything is. */
function controlPlaneIndex(service: 'control-plane' | 'dev', forwardAuth: boolean): ServerIndex {
  return {
    service: service === 'dev' ? 'keygate dev' : 'keygate control plane',
    about:
      service === 'dev'
        ? 'Control plane and verifier in one process, in memory: the management API needs a root key (the one printed at start); keys.verifyKey does not.'
        : 'The management API (a root key in Authorization: Bearer) and keys.verifyKey.',
    links: {
      console: '/console',
      apiReference: '/docs',
      openapi: '/openapi.json',
      v1: '/v1/{service}.{method}',
      v2: '/v2/{service}.{method}',
      verifyKey: 'POST /v1/keys.verifyKey',
      ...(forwardAuth ? { forwardAuth: '/v1/authorize' } : {}),
      errors: '/docs/errors',
      health: '/livez /readyz /metrics',
    },
    browserHome: 'console',
  }
}

/**
 * The control plane, wired: the management app on the store, and a key verifier of its own that serves
 * keys.verifyKey (and, in dev, forward-auth) through the verifier's code path. The app knows the verifier
 * only as what it hands over here: a write listener (read-your-writes), readiness, and public routes.
 * Nothing is started: the caller starts the verifier's sync and listens. Closing the app stops the verifier
 * (handing its last analytics rows over), then closes the backend.
 */
export function assembleControlPlane(
  parts: ProcessParts<Store>,
  settings: ControlPlaneSettings,
): AssembledControlPlane {
  const metrics = createMetricsRegistry(settings.service ?? 'control-plane')
  const webhookPolicy = settings.webhookPolicy ?? DEFAULT_WEBHOOK_POLICY
  // One sender for the worker's deliveries and webhooks.sendTest's: the same policy, connections and signing.
  const webhookSender = new EndpointSender(webhookPolicy)
  const secrets = settings.sealingKeys && new SecretBox(settings.sealingKeys)
  const webhooks = webhookProcessesOf(parts, webhookPolicy, metrics.registry, webhookSender, secrets)
  // The verifier's subscription to the change feed tells the webhooks' deriver of each change too.
  const verifier = keyVerifierOf(
    { ...parts, feed: tapChangeFeed(parts.feed, webhooks.tap) },
    settings,
    metrics.registry,
  )
  const ratelimits = namespaceRatelimitsOf(parts, settings, verifier)
  const { gateway } = settings
  const rootKeyUse = new RootKeyUse(parts.store.rootKeys, parts.clock, parts.log)
  // One root-key check for the management API and v2's verifyKey: read from the store on every call.
  const rootKeys = new RootKeyAuthenticator(
    new StoredRootKeys(parts.store.rootKeys, rootKeyUse),
    settings.bootstrapRootKey,
  )
  const consoleFiles = loadConsole(settings.consoleDir ?? builtConsoleDir())
  if (!consoleFiles) parts.log.warn('the admin console is not built (npm run build): /console answers 404')
  const portalPage = loadBuiltPage(settings.portalPageDir ?? builtPageDir('portal'))
  if (!portalPage) parts.log.warn('the customer portal is not built (npm run build): /portal/ answers 404')
  const ingest =
    settings.analytics && analyticsIngestOf(parts, settings.analytics, metrics.registry, () => webhooks.wake())
  const app = buildControlPlaneApp({
    store: parts.store,
    clock: parts.clock,
    log: parts.log,
    metrics,
    bodyLimitBytes: settings.bodyLimitBytes,
    docsBaseUrl: settings.docsBaseUrl,
    hasBootstrapRootKey: settings.bootstrapRootKey !== undefined,
    rootKeys,
    managementRateLimit: settings.managementRateLimit,
    webhookPolicy,
    onWrite: (write) => verifier.applyChange(write.event),
    ratelimits,
    console: consoleFiles,
    portalPage,
    hostLookup: settings.hostLookup,
    webhookSender,
    secrets,
    leakReportKeys:
      settings.secretScanningKeysUrl === undefined
        ? undefined
        : new PublishedSigningKeys({ url: settings.secretScanningKeysUrl, clock: parts.clock, log: parts.log }),
    leakReportReads: settings.leakReportReads,
    portalUrl: settings.portalUrl,
    analytics: ingest && {
      engine: () => (ingest.refused ? undefined : settings.analytics?.engine),
      why: () => 'Analytics are served by the control plane that runs the embedded engine, not by this one',
    },
    notReadyReasons: () => verifier.notReadyReasons(),
    storeReached: verifier.synced,
    publicRoutes: (open) => {
      // The verifier's endpoints, on Fastify: the same code path as a verifier's (v2's checks its root key as the
      // management API does).
      // A plugin of their own, loaded after the portal's: the reference lists them in that order.
      void open.register(async (scope: KeygateServer) =>
        serveRoutes(scope, undefined, [verifyKeyRoute(verifier), v2VerifyKeyRoute(verifier, rootKeys)]),
      )
      if (gateway) registerAuthorize(open, verifier, gateway, settings.docsBaseUrl)
      registerIndex(open, controlPlaneIndex(settings.service ?? 'control-plane', gateway !== undefined))
    },
  })
  // Once the store has answered (the verifier's first sync): started on a connection still being made, their first
  // reads would fail and warn of a healthy start.
  let closed = false
  app.addHook('onReady', async () => {
    void verifier.synced.then(() => {
      if (closed) return
      ratelimits.start()
      webhooks.start()
      ingest?.start()
    })
  })
  // One hook, in order: the verifier's last analytics rows and root keys' last uses are written before the store
  // closes.
  app.addHook('onClose', async () => {
    closed = true
    await ingest?.stop()
    await webhooks.stop()
    await ratelimits.stop()
    await verifier.stop()
    await rootKeyUse.settle()
    await parts.closeBackend?.()
  })
  return { app, verifier, ratelimits, ingest }
}

/**
 * The analytics ingest on this control plane. An embedded engine is this control plane's alone: it ingests only if no
 * other control plane does when it starts (else two engines would each hold part of the rows), and says so if not. A
 * server engine is every control plane's: any may hold the lease and ingest, and every one answers analytics queries
 * (the ingest is never `refused`).
 */
function analyticsIngestOf(
  parts: ProcessParts<Store>,
  analytics: { engine: AnalyticsEngine; holder: string },
  registry: Registry,
  onQueued: () => void,
): AnalyticsIngest {
  const { engine, holder } = analytics
  const log = parts.log.child({ component: 'analytics' })
  const { store, clock } = parts
  // Usage events are sent by the ingest's lease holder once its watermark passes a period's end.
  const usageEvents = new UsageEvents({
    engine,
    clock,
    webhooks: store.webhooks,
    marks: usageEventMarks(store.analyticsBuffer),
    // Only read here: no write to announce.
    apiSettings: new ApiSettingsRecords(store.entities, () => undefined),
    log: parts.log.child({ component: 'usage-events' }),
    onQueued,
  })
  // Usage alerts, by the same holder after the same passes: a crossing is seen once its rows are in the engine.
  const usageAlerts = new UsageAlerts({
    engine,
    clock,
    webhooks: store.webhooks,
    index: store.entities,
    thresholdsOf: async (subject) => {
      if ('identity' in subject) {
        const found = await store.entities.getEntity<IdentityRecord>(identityAddress(subject.identity))
        return found?.doc.usageThresholds && { thresholds: found.doc.usageThresholds }
      }
      const key = await store.keys.getKeyById(subject.keyId)
      // A key's id is never used again: its member can go.
      if (key === null) return 'gone'
      return key.usageThresholds && { thresholds: key.usageThresholds, apiId: key.apiId }
    },
    marks: store.analyticsBuffer,
    apiSettings: new ApiSettingsRecords(store.entities, () => undefined),
    log: parts.log.child({ component: 'usage-alerts' }),
    onQueued,
  })
  return new AnalyticsIngest({
    now: () => clock.now(),
    // One after the other (one engine query at a time), each whatever the other did; each failure is said, and
    // tried again after the next pass.
    afterPass: async (watermark) => {
      for (const [what, run] of [
        ['usage events', () => usageEvents.run(watermark)],
        ['usage alerts', () => usageAlerts.runIfDue(watermark)],
      ] as const) {
        try {
          await run()
        } catch (err) {
          log.warn({ err, watermark }, `${what} failed after an ingest pass: tried again after the next`)
        }
      }
    },
    buffer: parts.store.analyticsBuffer,
    engine,
    log,
    registry,
    holder,
    namespaceIdOf: async (name) =>
      (await parts.store.entities.getEntity<NamespaceRecord>(namespaceAddress(name)))?.doc.id,
    moveCounters: (stillHeld) =>
      moveUsageCounters({
        counters: parts.store.usageCounters,
        engine,
        keyOf: (keyId) => parts.store.keys.getKeyById(keyId),
        stillHeld,
      }),
    ...(engine.kind === 'embedded'
      ? {
          exclusive: {
            onRefused: () =>
              log.error(
                { holder },
                'another control plane runs the embedded analytics engine on this store: this one ingests and serves ' +
                  'no analytics (analytics calls answer 412 here: send them to that one)',
              ),
          },
        }
      : {}),
  })
}

/**
 * Webhooks on this control plane: the deriver (events from the change logs; one replica at a time, by lease) and the
 * delivery worker (every replica), both beside the app and never on its requests' path. The deriver hears of changes
 * from `tap`, on the change feed, and wakes its worker when it queues deliveries. Stopping them closes the sender's
 * connections, once the app's requests are done (onClose).
 */
function webhookProcessesOf(
  parts: ProcessParts<Store>,
  policy: WebhookPolicy,
  registry: Registry,
  sender: EndpointSender,
  secrets: SecretBox | undefined,
) {
  const { store, clock, log } = parts
  const metrics = createWebhookMetrics(registry, () => store.webhooks.queueDepth())
  const exports = new MeterExports({
    secrets,
    identityOf: async (externalId) =>
      (await store.entities.getEntity<IdentityRecord>(identityAddress(externalId)))?.doc ?? null,
  })
  const worker = new DeliveryWorker({ webhooks: store.webhooks, sender, policy, clock, log, metrics, exports })
  const deriver = new EventDeriver({
    changes: store.changes,
    snapshots: store.snapshots,
    keys: store.keys,
    entities: store.entities,
    rootKeys: store.rootKeys,
    webhooks: store.webhooks,
    policy,
    clock,
    log,
    metrics,
    holder: `${hostname()}:${process.pid}:${randomBytes(6).toString('base64url')}`,
    onQueued: () => worker.wake(),
  })
  return {
    tap: deriver.tap,
    /** Wakes the delivery worker: deliveries were queued (usage events). */
    wake: () => worker.wake(),
    start() {
      deriver.start()
      worker.start()
    },
    /** Stops deriving and claiming, waits for the deliveries in flight, then closes the connections to endpoints. */
    async stop() {
      await deriver.stop()
      await worker.stop()
      await sender.close()
    },
  }
}
