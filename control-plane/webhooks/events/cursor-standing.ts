import type { ShardRevision } from '../../../shared/store/change-log/change-log-store.js'

/**
 * Where a shard's webhooks cursor stands against the head of the shard's change log:
 * - `reset`: the head is of another epoch. Redis lost the shard's data (a restart without persistence, a failover to
 *   an empty replica): the cursor's revisions mean nothing now.
 * - `back`: the head is behind the cursor in its epoch (a failover to a replica that missed the last writes): the
 *   revisions past the head will be written again, by other changes, which must not be taken as seen.
 * - `behind`: changes past the cursor are to be derived.
 * - `current`: nothing past the cursor.
 */
export type CursorStanding = 'reset' | 'back' | 'behind' | 'current'

export function cursorStanding(cursor: ShardRevision, head: ShardRevision): CursorStanding {
  // A cursor placed before the shard's first write has no epoch yet: any epoch continues from it.
  if (cursor.epoch !== '' && cursor.epoch !== head.epoch) return 'reset'
  if (head.rev < cursor.rev) return 'back'
  return head.rev > cursor.rev ? 'behind' : 'current'
}

/** How many changes past the cursor the head is: none where the cursor is to be moved rather than read on from. */
export function changesBehind(cursor: ShardRevision, head: ShardRevision): number {
  return cursorStanding(cursor, head) === 'behind' ? head.rev - cursor.rev : 0
}
