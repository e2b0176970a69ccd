import type { ChangeSnapshot, ChangeSnapshotStore } from './change-snapshot-store.js'
import type { RedisClient } from '../redis/redis-connection.js'
import { redisKeys } from '../redis/redis-keys.js'
import { storeCall } from '../redis/redis-store-call.js'

/** The snapshots on Redis: one capped STREAM per shard in the shard's slot, written by the write script. */
export class RedisChangeSnapshotStore implements ChangeSnapshotStore {
  constructor(private readonly redis: RedisClient) {}

  async readSnapshots(shard: number, afterRev: number, throughRev: number): Promise<Map<number, ChangeSnapshot>> {
    const snapshots = new Map<number, ChangeSnapshot>()
    if (throughRev <= afterRev) return snapshots
    const entries = await storeCall(() =>
      this.redis.xrange(redisKeys.changeSnapshots(shard), `${afterRev + 1}-0`, `${throughRev}-1`),
    )
    for (const [id, fields] of entries) {
      const field = (name: string) => {
        const at = fields.indexOf(name)
        return at === -1 ? undefined : fields[at + 1]
      }
      const credits = field('credits')
      const identityId = field('identityId')
      snapshots.set(parseInt(id, 10), {
        doc: JSON.parse(field('doc') ?? '{}') as Record<string, unknown>,
        ...(credits !== undefined ? { credits: Number(credits) } : {}),
        ...(identityId !== undefined ? { identityId } : {}),
      })
    }
    return snapshots
  }

  async forgetSnapshots(shard: number, throughRev: number): Promise<void> {
    // Entries with ids below the next revision's: exactly those read past.
    await storeCall(() => this.redis.xtrim(redisKeys.changeSnapshots(shard), 'MINID', `${throughRev + 1}-0`))
  }
}
