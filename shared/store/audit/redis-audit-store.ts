import { AUDIT_LOG_MAX_LEN, type AuditEntry, type NewAuditEntry } from '../../audit.js'
import type { AuditStore } from './audit-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'

/** The audit log on Redis: one capped STREAM (redis-keys.ts `auditLog`), entry ids as Redis gives them. */
export class RedisAuditStore implements AuditStore {
  constructor(private readonly redis: RedisClient) {}

  async appendAudit(entry: NewAuditEntry): Promise<void> {
    await storeCall(() =>
      this.redis.xadd(redisKeys.auditLog, 'MAXLEN', '~', AUDIT_LOG_MAX_LEN, '*', 'entry', JSON.stringify(entry)),
    )
  }

  async listAudit(options: { cursor?: string; limit: number }): Promise<AuditEntry[]> {
    // Nothing is older than 0-0, and Redis refuses the exclusive '(0-0' (no id comes before it to start from).
    if (options.cursor !== undefined && /^0+-0+$/.test(options.cursor)) return []
    const entries = await storeCall(() =>
      this.redis.xrevrange(
        redisKeys.auditLog,
        options.cursor === undefined ? '+' : `(${options.cursor}`,
        '-',
        'COUNT',
        options.limit,
      ),
    )
    return entries.map(([id, fields]) => ({ id, ...(JSON.parse(fields[1] ?? '{}') as NewAuditEntry) }))
  }
}
