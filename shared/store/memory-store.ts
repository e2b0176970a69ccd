import type { Clock } from '../clock.js'
import { identityAddress, type IdentityRecord } from '../identity.js'
import type { MemoryChangeFeed } from '../feed/memory-change-feed.js'
import { MemoryApiKeyStore } from './api-keys/memory-api-key-store.js'
import { MemoryAuditStore } from './audit/memory-audit-store.js'
import { MemoryChangeLogStore } from './change-log/memory-change-log-store.js'
import { MemoryChangeSnapshotStore } from './change-snapshots/memory-change-snapshot-store.js'
import { MemoryCounterStore } from './counters/memory-counter-store.js'
import { MemoryEntityStore } from './entities/memory-entity-store.js'
import { MemoryLeakReportStore } from './leak-reports/memory-leak-report-store.js'
import { MemoryPortalSessionStore } from './portal-sessions/memory-portal-session-store.js'
import { MemoryRootKeyStore } from './root-keys/memory-root-key-store.js'
import { MemoryUsageCounterStore } from './usage-counters/memory-usage-counter-store.js'
import { MemoryAnalyticsBufferStore } from './analytics-buffer/memory-analytics-buffer-store.js'
import { MemoryWebhookStore } from './webhooks/memory-webhook-store.js'
import type { Store } from './store.js'

/** The memory store: its change log is a MemoryChangeLogStore, which its writes publish on a MemoryChangeFeed. */
export interface MemoryStore extends Store {
  readonly kind: 'memory'
  readonly changes: MemoryChangeLogStore
}

/**
 * The embedded default: a real store in process memory, every part passing the same contract suite as on Redis.
 * Keys and entities write to one change log, which publishes on `feed`. Everything is lost when the process exits.
 * `clock` runs the webhooks' leases (Redis runs them on its own clock).
 */
export function createMemoryStore(
  feed: MemoryChangeFeed,
  options: { changeLogMaxLen?: number; clock?: Clock } = {},
): MemoryStore {
  const changes = new MemoryChangeLogStore(feed, options.changeLogMaxLen)
  const snapshots = new MemoryChangeSnapshotStore()
  const entities = new MemoryEntityStore((...change) => changes.append(...change), snapshots)
  const identityIdOf = (externalId: string) => entities.docOf<IdentityRecord>(identityAddress(externalId))?.id
  return {
    kind: 'memory',
    keys: new MemoryApiKeyStore(changes, snapshots, identityIdOf),
    entities,
    rootKeys: new MemoryRootKeyStore(),
    counters: new MemoryCounterStore(),
    usageCounters: new MemoryUsageCounterStore(),
    analyticsBuffer: new MemoryAnalyticsBufferStore(options.clock && (() => options.clock!.now())),
    audit: new MemoryAuditStore(),
    webhooks: new MemoryWebhookStore(options.clock),
    leakReports: new MemoryLeakReportStore(options.clock),
    portalSessions: new MemoryPortalSessionStore(options.clock),
    changes,
    snapshots,
    async ping() {},
    async close() {},
  }
}
