import { SHARD_COUNT } from '../../shards.js'
import { CHANGE_SNAPSHOTS_MAX_LEN, type ChangeSnapshot, type ChangeSnapshotStore } from './change-snapshot-store.js'

/**
 * The snapshots in process memory: the memory writes of keys and entities keep one (`keep`) in the same synchronous
 * step as their change, as the Redis write script does. Capped per shard as on Redis.
 */
export class MemoryChangeSnapshotStore implements ChangeSnapshotStore {
  /** Per shard, by revision, in revision order (a Map keeps insertion order, and revisions only grow). */
  private readonly shards: Map<number, string>[] = Array.from({ length: SHARD_COUNT }, () => new Map<number, string>())

  constructor(private readonly maxLen = CHANGE_SNAPSHOTS_MAX_LEN) {}

  /** Keeps the record as change `rev` of the shard left it, as JSON (as on Redis: a reader cannot change it). */
  keep(shard: number, rev: number, snapshot: ChangeSnapshot): void {
    const kept = this.shards[shard]!
    kept.set(rev, JSON.stringify(snapshot))
    for (const oldest of kept.keys()) {
      if (kept.size <= this.maxLen) break
      kept.delete(oldest)
    }
  }

  async readSnapshots(shard: number, afterRev: number, throughRev: number): Promise<Map<number, ChangeSnapshot>> {
    const snapshots = new Map<number, ChangeSnapshot>()
    for (const [rev, snapshot] of this.shards[shard]!) {
      if (rev > afterRev && rev <= throughRev) snapshots.set(rev, JSON.parse(snapshot) as ChangeSnapshot)
    }
    return snapshots
  }

  async forgetSnapshots(shard: number, throughRev: number): Promise<void> {
    const kept = this.shards[shard]!
    for (const rev of kept.keys()) {
      if (rev > throughRev) break
      kept.delete(rev)
    }
  }
}
