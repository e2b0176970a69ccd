import type { Clock } from '../shared/clock.js'
import type { SecretBox } from '../shared/secrets/secret-box.js'
import { auditedKey } from './keys/key-response.js'
import { buildServer, type ServerBase } from '../shared/http/build-server.js'
import type { KeygateServer } from '../shared/http/keygate-server.js'
import { storeReadiness } from '../shared/http/store-readiness.js'
import type { ManagementStore } from '../shared/store/management-store.js'
import { AuditLog } from './audit/audit-log.js'
import { limitManagementCalls } from './http/management-rate-limit.js'
import { KeyWrites } from './keys/key-writes.js'
import type { WriteListener } from './write-listener.js'
import { ApiSettingsRecords } from './apis/api-settings.js'
import type { RootKeyAuthenticator } from '../shared/root-keys/root-key-authenticator.js'
import { serveRoutes } from '../shared/http/route.js'
import { RootKeys } from './root-keys/root-keys.js'
import { rootKeyBackfill } from './root-keys/root-key-backfill.js'
import { Rbac } from './permissions/rbac.js'
import { RatelimitNamespaces } from './ratelimits/ratelimit-namespaces.js'
import { RatelimitOverrides } from './ratelimits/ratelimit-overrides.js'
import type { NamespaceLimits } from '../shared/ratelimits/namespace-limits.js'
import { Identities } from './identities/identities.js'
import { LIVENESS_ROUTES } from './http/liveness.js'
import { registerOpenApi } from './openapi/openapi-plugin.js'
import { registerConsole, type ConsoleFiles } from './pages/console-route.js'
import { registerPortalPage } from './pages/portal-page-route.js'
import type { BuiltPageFiles } from './pages/built-page.js'
import { v2LimitRoutes } from './ratelimits/wire/ratelimit-routes.v2.js'
import type { ControlPlaneDeps } from './control-plane-deps.js'
import { MANAGEMENT_ROUTES } from './management-routes.js'
import { DEFAULT_WEBHOOK_POLICY, type WebhookPolicy } from './webhooks/webhook-policy.js'
import { dnsLookup, type HostLookup } from './webhooks/delivery/address-policy.js'
import type { EndpointSender } from './webhooks/delivery/endpoint-sender.js'
import { TestsInFlight } from './webhooks/tests-in-flight.js'
import type { ReportSigningKeys } from './leaks/github-public-keys.js'
import { registerGithubLeakReports } from './leaks/wire/github-report-route.js'
import { createLeakMetrics } from './leaks/leak-metrics.js'
import type { ReportReadLimits } from './leaks/unverified-report-reads.js'
import { PortalRecords } from './portal/portal-records.js'
import { NO_ANALYTICS, type AnalyticsAccess } from './analytics/analytics-access.js'
import { noStore } from './portal/wire/no-store.js'
import { portalRoutes } from './portal/wire/portal-session-route.js'
import { PORTAL_SESSION_ROUTES } from './portal/session/session-routes.v2.js'

export interface ControlPlaneAppDeps extends ServerBase {
  store: ManagementStore
  clock: Clock
  /** Whether KEYGATE_ROOT_KEY is set: then stored root keys verifiers cannot check yet are published at start. */
  hasBootstrapRootKey: boolean
  /** Who calls: the management hook's root-key check (store-backed: control-plane/root-keys/stored-root-keys.ts). */
  rootKeys: RootKeyAuthenticator
  /** Management calls per root key per minute (0 or absent: no limit). */
  managementRateLimit?: number | undefined
  /** Told of every write as soon as the store has it: the process's verifier, for read-your-writes. */
  onWrite: WriteListener
  /** Why something else in the process (its verifier's sync) keeps it from serving correctly, or []. */
  notReadyReasons?: () => string[]
  /**
   * Resolves once the store has answered (the process's verifier's first sync): the app's background work on the
   * store starts then, not while its connection is still being made. Default: at once.
   */
  storeReached?: Promise<void>
  /** ratelimits.limit's core: the process's verifier's (cli/assemble-verifier.ts namespaceRatelimitsOf). */
  ratelimits: NamespaceLimits
  /**
   * Routes outside the management API's root-key hook, beside liveness: v1's keys.verifyKey (no root key), v2's (which
   * checks its root key with the same authenticator), forward-auth in dev.
   */
  publicRoutes?: (app: KeygateServer) => void
  /** What operators allow of webhook endpoints (default: DEFAULT_WEBHOOK_POLICY). */
  webhookPolicy?: WebhookPolicy
  /** How webhook endpoints' hosts are resolved (default: DNS). */
  hostLookup?: HostLookup
  /** What sends requests to webhook endpoints (webhooks.sendTest's), opened and closed by the caller. */
  webhookSender: Pick<EndpointSender, 'send'>
  /** What seals the secrets kept in the store (meter exports' credentials); absent: none can be kept. */
  secrets?: SecretBox | undefined
  /** The admin console's built files, served at /console (null: not built, /console says so). */
  console?: ConsoleFiles | null
  /** The customer portal's built page, served at /portal/ (null: not built, /portal/ says so). */
  portalPage?: BuiltPageFiles | null
  /** The keys that sign GitHub's leak reports: /v1/secret-scanning/github is served only with them. */
  leakReportKeys?: ReportSigningKeys | undefined
  /** How report bodies are read before their signature is checked (default: DEFAULT_REPORT_READ_LIMITS). */
  leakReportReads?: ReportReadLimits | undefined
  /** Where the customer portal's page is served (portal.createSession's URL); default http://localhost/portal/. */
  portalUrl?: string | undefined
  /** The engine analytics queries run on (default: none, and they answer 412). */
  analytics?: AnalyticsAccess | undefined
}

/**
 * The control plane's HTTP surface. Never listens: cli/control-plane-command.ts does, tests inject. What it
 * needs of a verifier is handed in by the composition root (cli/assemble-control-plane.ts).
 */
export function buildControlPlaneApp(deps: ControlPlaneAppDeps): KeygateServer {
  const storeReady = storeReadiness(deps.store)
  const app = buildServer({
    ...deps,
    logRequests: true,
    notReadyReasons: async () => [...(await storeReady()), ...(deps.notReadyReasons?.() ?? [])],
    // Before every route, the server's own (probes, metrics) included, so that the document lists them all.
    documentation: registerOpenApi,
  })
  const audit = new AuditLog(deps.store.audit, deps.clock, deps.log, auditedKey)
  const rootKeys = new RootKeys({ store: deps.store, audit, clock: deps.clock, onWrite: deps.onWrite })
  const rbac = new Rbac(deps.store.entities, deps.clock, deps.onWrite, audit)
  const identities = new Identities(deps.store.entities, deps.clock, deps.onWrite)
  const namespaces = new RatelimitNamespaces(deps.store.entities, deps.clock, deps.onWrite)
  const overrides = new RatelimitOverrides(deps.store.entities, namespaces, deps.clock, deps.onWrite)
  const apiSettings = new ApiSettingsRecords(deps.store.entities, deps.onWrite)
  const writes = new KeyWrites(deps, deps.onWrite, apiSettings)
  const routeDeps: ControlPlaneDeps = {
    store: deps.store,
    audit,
    rootKeys,
    authenticateRootKey: (authorization) => deps.rootKeys.principalOf(authorization),
    rbac,
    namespaces,
    overrides,
    identities,
    writes,
    apiSettings,
    ratelimits: deps.ratelimits,
    webhookPolicy: deps.webhookPolicy ?? DEFAULT_WEBHOOK_POLICY,
    hostLookup: deps.hostLookup ?? dnsLookup,
    webhookSender: deps.webhookSender,
    secrets: deps.secrets,
    webhookTests: new TestsInFlight(),
    leakMetrics: createLeakMetrics(deps.metrics.registry),
    portals: new PortalRecords(deps.store.entities, () => deps.clock.now(), deps.onWrite),
    portalUrl: deps.portalUrl ?? 'http://localhost/portal/',
    analytics: deps.analytics ?? NO_ANALYTICS,
    clock: deps.clock,
    log: deps.log,
  }
  // Management routes: each checks its root key before the body is even parsed (UNAUTHORIZED before 400).
  app.register(async (management: KeygateServer) => {
    // Stored root keys that verifiers cannot check yet (legacy ones, never published): published at start (in this
    // plugin, so that its onClose runs before the store is closed).
    const backfill = rootKeyBackfill({
      rootKeys,
      hasBootstrapRootKey: deps.hasBootstrapRootKey,
      storeReached: deps.storeReached ?? Promise.resolve(),
      log: deps.log,
    })
    management.addHook('onReady', async () => backfill.start())
    management.addHook('onClose', () => backfill.stop())
    await limitManagementCalls(management, deps.managementRateLimit ?? 0)
    noStore(management)
    serveRoutes(management, routeDeps, MANAGEMENT_ROUTES)
    serveRoutes(management, undefined, v2LimitRoutes(routeDeps))
  })
  // In a plugin of their own so that they load after the OpenAPI plugin, which documents routes as they are added.
  app.register(async (open: KeygateServer) => {
    serveRoutes(open, routeDeps, LIVENESS_ROUTES)
    registerConsole(open, deps.console ?? null)
    registerPortalPage(open, deps.portalPage ?? null)
    if (deps.leakReportKeys) registerGithubLeakReports(open, routeDeps, deps.leakReportKeys, deps.leakReportReads)
    // Their own plugin: their hooks (the session, no-store) stay off every other route.
    open.register(async (portal: KeygateServer) => {
      noStore(portal)
      serveRoutes(portal, routeDeps, portalRoutes(PORTAL_SESSION_ROUTES))
    })
    deps.publicRoutes?.(open)
  })
  return app
}
