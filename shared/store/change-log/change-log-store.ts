import type { ChangeEvent } from '../../change-event.js'
import type { CreditNoticeEntry } from '../../keys/credit-notice.js'

/** Where a shard's revision sequence stands: its epoch ('' before the first write) and last revision. */
export interface ShardRevision {
  epoch: string
  rev: number
}

export interface RevisionSnapshot {
  /**
   * Identity of the running store (Redis: the server's run_id). It changes on every restart or failover,
   * the only ways data can be rolled back to an older state that epochs and revisions cannot tell apart.
   */
  instance: string
  shards: ShardRevision[]
}

/** A shard's change log has been trimmed past the position a reader asked for: it cannot be replayed. */
export const LOG_TRIMMED = 'trimmed' as const

/**
 * The shards' revisions and change logs (`store.changes`), which verifiers sync from. Written only by the writes of
 * keys and entities (each bumps its shard's revision and appends to its log in the same step); read here. Revisions
 * are per shard (`shardOf(hash)`, `entityShard(address)`), start at 1 and only grow; each log is capped.
 */
export interface ChangeLogStore {
  /**
   * The store's instance and every shard's epoch and revision (rev 0, epoch '' where nothing was written), in one
   * round trip.
   */
  readRevisions(): Promise<RevisionSnapshot>
  /** One shard's epoch and revision (rev 0, epoch '' if nothing was written there), as readRevisions has it. */
  readRevision(shard: number): Promise<ShardRevision>
  /**
   * Changes of a shard with rev > afterRev, oldest first, contiguous from afterRev + 1, at most `limit`;
   * LOG_TRIMMED if the log no longer reaches back that far (or does not continue from there).
   */
  readChanges(shard: number, afterRev: number, limit: number): Promise<ChangeEvent[] | typeof LOG_TRIMMED>

  /**
   * A shard's credit notices (shared/keys/credit-notice.ts) after `afterId` ('' for the oldest kept), oldest first, at
   * most `limit`; LOG_TRIMMED if the log no longer holds the notice `afterId` names or the ones after it.
   */
  readCreditNotices(shard: number, afterId: string, limit: number): Promise<CreditNoticeEntry[] | typeof LOG_TRIMMED>
  /** Each shard's last credit notice id ('' where there is none): where a new reader of the notices starts. */
  lastCreditNoticeIds(): Promise<string[]>
}
