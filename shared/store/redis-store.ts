import type { ReplicationSettings } from '../config/settings.js'
import { identityAddress, type IdentityRecord } from '../identity.js'
import { RedisApiKeyStore } from './api-keys/redis-api-key-store.js'
import { RedisAuditStore } from './audit/redis-audit-store.js'
import { RedisChangeLogStore } from './change-log/redis-change-log-store.js'
import { RedisChangeSnapshotStore } from './change-snapshots/redis-change-snapshot-store.js'
import type { RedisClient } from './redis/redis-connection.js'
import { RedisCounterStore } from './counters/redis-counter-store.js'
import { RedisEntityStore } from './entities/redis-entity-store.js'
import { RedisLeakReportStore } from './leak-reports/redis-leak-report-store.js'
import { RedisPortalSessionStore } from './portal-sessions/redis-portal-session-store.js'
import { replicaWait } from './redis/redis-replica-wait.js'
import { RedisRootKeyStore } from './root-keys/redis-root-key-store.js'
import { storeCall } from './redis/redis-store-call.js'
import { RedisUsageCounterStore } from './usage-counters/redis-usage-counter-store.js'
import { RedisAnalyticsBufferStore } from './analytics-buffer/redis-analytics-buffer-store.js'
import { RedisWebhookStore } from './webhooks/redis-webhook-store.js'
import type { Store } from './store.js'

export interface RedisStoreOptions {
  /** Wall clock of the keys' writes (a pointer's age, a delete's refill clock). */
  now?: () => number
  /** Replicas every write waits for (redis-replica-wait.ts); none by default. */
  replication?: ReplicationSettings
}

/**
 * The production store on Redis (single node, Sentinel or Cluster: every multi-key step stays in one slot): every
 * part on the one connection `redis`, which the store takes over (its close() closes it). Key layout: redis-keys.ts;
 * scripts: redis-scripts.ts, redis-root-key-scripts.ts, redis-webhook-scripts.ts and beside the parts that run them.
 */
export function createRedisStore(redis: RedisClient, options: RedisStoreOptions = {}): Store {
  const afterWrite = replicaWait(redis, options.replication ?? { waitReplicas: 0, timeoutMs: 1_000 })
  const entities = new RedisEntityStore(redis, afterWrite)
  const identityIdOf = async (externalId: string) =>
    (await entities.getEntity<IdentityRecord>(identityAddress(externalId)))?.doc.id
  return {
    kind: 'redis',
    keys: new RedisApiKeyStore(redis, afterWrite, identityIdOf, options.now),
    entities,
    rootKeys: new RedisRootKeyStore(redis, afterWrite),
    counters: new RedisCounterStore(redis),
    usageCounters: new RedisUsageCounterStore(redis),
    analyticsBuffer: new RedisAnalyticsBufferStore(redis),
    audit: new RedisAuditStore(redis),
    webhooks: new RedisWebhookStore(redis, afterWrite),
    leakReports: new RedisLeakReportStore(redis),
    portalSessions: new RedisPortalSessionStore(redis),
    changes: new RedisChangeLogStore(redis),
    snapshots: new RedisChangeSnapshotStore(redis),
    async ping() {
      await storeCall(() => redis.ping())
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect())
    },
  }
}
