import { pino } from 'pino'
import { auditedKey } from '../control-plane/keys/key-response.js'
import { AuditLog } from '../control-plane/audit/audit-log.js'
import { RootKeys } from '../control-plane/root-keys/root-keys.js'
import { systemClock } from '../shared/clock.js'
import type { RootKeyCommandConfig } from '../shared/config/config.js'
import { createLogger } from '../shared/logger.js'
import { connectRedis } from '../shared/store/redis/redis-connection.js'
import { createRedisStore } from '../shared/store/redis-store.js'

/**
 * Runs `work` with the root-key service on the store the control plane uses, found as it finds it (REDIS_URL,
 * Sentinel or Cluster, writes confirmed by REDIS_WAIT_REPLICAS), then closes the connection. Writes are audited as
 * `cli`; a failure to audit is logged on stderr (stdout carries only what the command prints).
 */
export async function withRootKeys<T>(
  config: RootKeyCommandConfig,
  work: (rootKeys: RootKeys) => Promise<T>,
): Promise<T> {
  const redis = await connectRedis(config.redisUrl, 'root-key', config.redisTarget)
  const store = createRedisStore(redis, { replication: config.replication })
  try {
    const log = createLogger('warn', 'keygate-root-key', pino.destination(2))
    const audit = new AuditLog(store.audit, systemClock, log, auditedKey)
    return await work(new RootKeys({ store, audit, clock: systemClock }))
  } finally {
    await store.close()
  }
}
