import type { ApiKeyStore } from './api-keys/api-key-store.js'
import type { AuditStore } from './audit/audit-store.js'
import type { ChangeLogStore } from './change-log/change-log-store.js'
import type { EntityStore } from './entities/entity-store.js'
import type { LeakReportStore } from './leak-reports/leak-report-store.js'
import type { PortalSessionStore } from './portal-sessions/portal-session-store.js'
import type { RootKeyStore } from './root-keys/root-key-store.js'
import type { StoreHealth } from './store-health.js'
import type { UsageCounterStore } from './usage-counters/usage-counter-store.js'
import type { CounterStore } from './counters/counter-store.js'
import type { AnalyticsBufferStore } from './analytics-buffer/analytics-buffer-store.js'
import type { WebhookStore } from './webhooks/webhook-store.js'

/**
 * What the control plane asks of the store (store.ts), part by part: apis, keys and credits, entities, root keys,
 * the counters kept before analytics, the audit log, webhooks and leak reports.
 */
export interface ManagementStore extends StoreHealth {
  readonly keys: ApiKeyStore
  readonly entities: EntityStore
  readonly rootKeys: RootKeyStore
  /** The verification counters kept before analytics, moved into the engine once. */
  readonly usageCounters: UsageCounterStore
  /** The analytics query quota is counted as a rate-limit window is. */
  readonly counters: Pick<CounterStore, 'consumeNamespaceLimit'>
  /** The analytics buffers: the control plane ingests them. */
  readonly analyticsBuffer: AnalyticsBufferStore
  readonly audit: AuditStore
  readonly webhooks: WebhookStore
  readonly leakReports: LeakReportStore
  readonly portalSessions: PortalSessionStore
  /** Where the change logs stand, for the webhooks' cursors. */
  readonly changes: Pick<ChangeLogStore, 'readRevisions' | 'lastCreditNoticeIds'>
}
