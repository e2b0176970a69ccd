import type { ApiKeyStore } from './api-keys/api-key-store.js'
import type { AuditStore } from './audit/audit-store.js'
import type { ChangeLogStore } from './change-log/change-log-store.js'
import type { ChangeSnapshotStore } from './change-snapshots/change-snapshot-store.js'
import type { CounterStore } from './counters/counter-store.js'
import type { EntityStore } from './entities/entity-store.js'
import type { LeakReportStore } from './leak-reports/leak-report-store.js'
import type { PortalSessionStore } from './portal-sessions/portal-session-store.js'
import type { RootKeyStore } from './root-keys/root-key-store.js'
import type { StoreHealth } from './store-health.js'
import type { UsageCounterStore } from './usage-counters/usage-counter-store.js'
import type { AnalyticsBufferStore } from './analytics-buffer/analytics-buffer-store.js'
import type { WebhookStore } from './webhooks/webhook-store.js'

/**
 * Where Keygate keeps everything, as parts: each part an interface with its contract written on it, a memory and a
 * Redis implementation side by side (`memory-*.ts`, `redis-*.ts`), and one contract suite run against both
 * (test/integration/store.contract.ts). The store is the truth; caches and events are hints. The whole only holds its
 * parts: each process depends on those it uses (the verifier: VerifierStore, the control plane: ManagementStore), and
 * whoever opened the store (backend.ts, memory-store.ts, redis-store.ts) closes it.
 *
 * What every part promises:
 * - Absence is `null` (or `false`), never an exception.
 * - Every write that can change a verdict (a key's, an entity's) is atomic per record: it bumps the record's shard
 *   revision, stores that revision on the record, appends the change to the shard's capped log and publishes it on the
 *   change feed, all as one step, and returns the event. A write that throws changed nothing.
 * - Store failures throw `StoreUnavailableError`; a lost compare-and-set throws `WriteConflictError`.
 */
export interface Store extends StoreHealth {
  /** Apis, keys and their credits. */
  readonly keys: ApiKeyStore
  /** Roles, permissions, identities, rate-limit namespaces and overrides, root keys' mirrors. */
  readonly entities: EntityStore
  /** Root keys: the control plane's truth of who may manage. */
  readonly rootKeys: RootKeyStore
  /** Rate-limit windows of keys and of the rate-limit service. */
  readonly counters: CounterStore
  /** The verification counters kept before analytics, moved into the engine once (nothing writes them). */
  readonly usageCounters: UsageCounterStore
  /** Analytics batches on their way from the processes that record them to the engine. */
  readonly analyticsBuffer: AnalyticsBufferStore
  readonly audit: AuditStore
  /** Webhook endpoints, events, the delivery queue and log. */
  readonly webhooks: WebhookStore
  /** Leak reports received, so that none is acted on twice. */
  readonly leakReports: LeakReportStore
  /** Customer portal sessions (portal-session-store.ts). */
  readonly portalSessions: PortalSessionStore
  /** Shard revisions and change logs. */
  readonly changes: ChangeLogStore
  /** The records as each change wrote them, for the webhooks' deriver. */
  readonly snapshots: ChangeSnapshotStore
  /** Closes the store's connections (nothing for memory). */
  close(): Promise<void>
}
