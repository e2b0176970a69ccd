import { pino, type Logger } from 'pino'
import type { SealingKey } from '../../shared/secrets/secret-box.js'
import { Writable } from 'node:stream'
import { assembleControlPlane } from '../../cli/assemble-control-plane.js'
import { assembleVerifier, type ProcessParts } from '../../cli/assemble-verifier.js'
import { monotonicClock, systemClock, type Clock } from '../../shared/clock.js'
import type { KeygateServer } from '../../shared/http/keygate-server.js'
import { loggerOptions } from '../../shared/logger.js'
import type { Store } from '../../shared/store/store.js'
import { openBackend as openStoreBackend, type Backend } from '../../shared/store/backend.js'
import { openRedis } from '../../shared/store/redis/redis-connection.js'
import type { ClientAddressSettings, SyncSettings } from '../../shared/config/settings.js'
import type { KeyVerifier, RecordingSettings } from '../../verifier/key-verifier.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import type { AnalyticsIngest } from '../../control-plane/analytics/ingest/analytics-ingest.js'
import type { NamespaceRatelimits } from '../../verifier/namespace-ratelimits.js'
import type { GatewayPolicy } from '../../shared/config/settings.js'
import type { HostLookup } from '../../control-plane/webhooks/delivery/address-policy.js'
import { DEFAULT_WEBHOOK_POLICY, type WebhookPolicy } from '../../control-plane/webhooks/webhook-policy.js'
import type { ReportReadLimits } from '../../control-plane/leaks/unverified-report-reads.js'

export const TEST_ROOT_KEY = 'test-root-key-0123456789abcdef'

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.UTC(2026, 0, 1)) {}
  now() {
    return this.ms
  }
  advance(ms: number) {
    this.ms += ms
  }
}

/** Every log line a server wrote, as text: tests scan it for secrets. */
export function capturedLogger(): { log: Logger; lines: string[] } {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { log: pino({ ...loggerOptions('trace', 'test') }, sink), lines }
}

export type { Backend } from '../../shared/store/backend.js'

/** A store and feed of either kind, connected; `redisUrl` selects Redis. */
export async function openBackend(redisUrl?: string): Promise<Backend> {
  if (!redisUrl) return openStoreBackend({ kind: 'memory' })
  const connections = {
    store: await openRedis(redisUrl, 'test'),
    feed: await openRedis(redisUrl, 'test-changes', { autoResubscribe: false }),
  }
  return openStoreBackend({ kind: 'redis', connections })
}

export interface TestServer {
  app: KeygateServer
  verifier: KeyVerifier
  /** ratelimits.limit's core (reconcile() hands async counts over now). */
  ratelimits: NamespaceRatelimits
  backend: Backend
  /** A control plane's analytics ingest, when it was given an engine. */
  ingest?: AnalyticsIngest | undefined
  close(): Promise<void>
}

/**
 * Makes every verification the verifiers (a control plane's own among them) answered so far queryable: each hands its
 * rows to the store's buffer, then the control plane ingests them into its engine.
 */
export async function ingestAnalytics(controlPlane: TestServer, ...verifiers: TestServer[]): Promise<void> {
  for (const server of [controlPlane, ...verifiers]) await server.verifier.flushAnalytics()
  if (controlPlane.ingest === undefined) throw new Error('this control plane was started without an analytics engine')
  await controlPlane.ingest.ingestNow()
}

const cache = { maxKeys: 10_000, maxUnknown: 1_000, unknownTtlMs: 10_000 }
export const DEFAULT_SYNC: SyncSettings = { maxStalenessMs: 5_000, pollIntervalMs: 1_000, onStale: 'read-through' }
const SERVER = { bodyLimitBytes: 1_048_576, docsBaseUrl: '/docs' }

export interface TestServerOptions {
  redisUrl?: string
  backend?: Backend
  log?: Logger
  clock?: Clock
  /** The clock the revocation bound is timed on (default: `clock` when given, so that one hand moves both). */
  elapsed?: Clock
  sync?: Partial<SyncSettings>
  /** Which address allow-lists check (default: the socket's). */
  clientAddress?: ClientAddressSettings
  gateway?: Partial<GatewayPolicy>
  managementRateLimit?: number
  /** Where the admin console is built (default: dist/console, as the CLI has it). */
  consoleDir?: URL
  /** Where the customer portal's page is built (default: dist/portal, as the CLI has it). */
  portalPageDir?: URL
  /** Runs on the assembled app before it is ready: a test adds its own hooks here (Fastify takes none after). */
  beforeReady?: (app: KeygateServer) => void
  /** The control plane's KEYGATE_ROOT_KEY (default TEST_ROOT_KEY; null: none). */
  bootstrapRootKey?: string | null
  /** What the control plane allows of webhook endpoints (default: DEFAULT_WEBHOOK_POLICY's). */
  webhookPolicy?: Partial<WebhookPolicy>
  /** How the control plane resolves webhook endpoints' hosts (default: DNS). */
  hostLookup?: HostLookup
  /** Where the keys that sign GitHub's leak reports are (control plane); null: the report route is not served. */
  secretScanningKeysUrl?: string | null
  /** How leak report bodies are read before their signature is checked (default: DEFAULT_REPORT_READ_LIMITS). */
  leakReportReads?: ReportReadLimits
  /** Where the portal page is (control plane; default http://localhost/portal/). */
  portalUrl?: string
  /** How the process's verifier records verifications for analytics (default: as the CLI has it). */
  recording?: Partial<RecordingSettings>
  /** The control plane's analytics engine, and who it is for the ingest's lease (default: none). */
  analytics?: { engine: AnalyticsEngine; holder: string }
  /** The keys sealing secrets in the store (default: TEST_SEALING_KEYS; null: none, as without ENCRYPTION_KEYS). */
  sealingKeys?: SealingKey[] | null
}

/** The keys a test control plane seals secrets with, unless told otherwise. */
export const TEST_SEALING_KEYS: SealingKey[] = [{ id: 'test', key: Buffer.alloc(32, 7) }]

/**
 * The parts a test server is assembled on: the test's clock, when it has one, moves both clocks, unless `elapsed`
 * names the one the staleness bound is timed on.
 */
async function partsOf(options: TestServerOptions): Promise<{ backend: Backend; parts: ProcessParts<Store> }> {
  const backend = options.backend ?? (await openBackend(options.redisUrl))
  const parts = {
    store: backend.store,
    feed: backend.feed,
    clock: options.clock ?? systemClock,
    elapsed: options.elapsed ?? options.clock ?? monotonicClock,
    log: options.log ?? pino({ level: 'silent' }),
  }
  return { backend, parts }
}

/**
 * A control plane (with its verifyKey) on its own store connection, assembled as the CLI does, ready to inject into.
 */
export async function startTestControlPlane(options: TestServerOptions = {}): Promise<TestServer> {
  const { backend, parts } = await partsOf(options)
  const { app, verifier, ratelimits, ingest } = assembleControlPlane(parts, {
    ...SERVER,
    cache,
    sync: { ...DEFAULT_SYNC, ...options.sync },
    clientAddress: options.clientAddress,
    bootstrapRootKey: options.bootstrapRootKey === null ? undefined : (options.bootstrapRootKey ?? TEST_ROOT_KEY),
    managementRateLimit: options.managementRateLimit,
    ...(options.consoleDir ? { consoleDir: options.consoleDir } : {}),
    ...(options.portalPageDir ? { portalPageDir: options.portalPageDir } : {}),
    webhookPolicy: { ...DEFAULT_WEBHOOK_POLICY, ...options.webhookPolicy },
    hostLookup: options.hostLookup,
    // Served, as a control plane serves it by default; the discard port: no report is ever acted on unless a test
    // serves keys of its own.
    secretScanningKeysUrl:
      options.secretScanningKeysUrl === null ? undefined : (options.secretScanningKeysUrl ?? 'http://127.0.0.1:9/keys'),
    leakReportReads: options.leakReportReads,
    portalUrl: options.portalUrl,
    analytics: options.analytics,
    sealingKeys: options.sealingKeys === null ? undefined : (options.sealingKeys ?? TEST_SEALING_KEYS),
    // Forward-auth beside the management API, as `keygate dev` has it.
    ...(options.gateway ? { gateway: { keyHeader: 'x-api-key', cost: 1, ...options.gateway } } : {}),
  })
  await verifier.start()
  await app.ready()
  return {
    app,
    verifier,
    ratelimits,
    backend,
    ingest,
    close: async () => {
      await app.close()
      if (!options.backend) await backend.close()
    },
  }
}

/** A verifier on its own store connection and feed subscription, assembled as the CLI does. */
export async function startTestVerifier(options: TestServerOptions = {}): Promise<TestServer> {
  const { backend, parts } = await partsOf(options)
  const { app, verifier, ratelimits } = await assembleVerifier(parts, {
    ...SERVER,
    // As the control plane has it: v2's keys.verifyKey accepts it on both.
    bootstrapRootKey: TEST_ROOT_KEY,
    cache,
    sync: { ...DEFAULT_SYNC, ...options.sync },
    clientAddress: options.clientAddress,
    gateway: { keyHeader: 'x-api-key', cost: 1, ...options.gateway },
    recording: options.recording,
  })
  await verifier.start()
  options.beforeReady?.(app)
  await app.ready()
  return {
    app,
    verifier,
    ratelimits,
    backend,
    close: async () => {
      await app.close()
      if (!options.backend) await backend.close()
    },
  }
}
