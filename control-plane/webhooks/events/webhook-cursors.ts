import { SHARD_COUNT } from '../../../shared/shards.js'
import type { ChangeLogStore } from '../../../shared/store/change-log/change-log-store.js'
import type { WebhookStore } from '../../../shared/store/webhooks/webhook-store.js'

/** What placing the cursors reads: where each shard's change log and credit notices stand. */
export type LogHeads = Pick<ChangeLogStore, 'readRevisions' | 'lastCreditNoticeIds'>

/**
 * Gives each shard without one a cursor at where its change log and its credit notices stand now: changes before
 * that make no events. Called by the deriver when it finds shards without one, and by webhooks.createEndpoint before
 * it stores an endpoint, so that every write made once an endpoint exists is past the cursors whichever control plane
 * derives, however late its first look comes. Several may place at once (two control planes starting, an endpoint
 * created during the deriver's first look): each cursor is written only if there is still none, so that one placed
 * and moved on meanwhile is never taken back to a head read before it, nor on past changes not yet derived.
 */
export async function placeMissingCursors(changes: LogHeads, webhooks: WebhookStore): Promise<void> {
  const cursors = await webhooks.readCursors()
  if (cursors.size < SHARD_COUNT) {
    const { shards } = await changes.readRevisions()
    for (let shard = 0; shard < SHARD_COUNT; shard++)
      if (!cursors.has(shard)) await webhooks.placeCursor(shard, shards[shard]!)
  }
  const noticeCursors = await webhooks.readNoticeCursors()
  if (noticeCursors.size < SHARD_COUNT) {
    const last = await changes.lastCreditNoticeIds()
    for (let shard = 0; shard < SHARD_COUNT; shard++)
      if (!noticeCursors.has(shard)) await webhooks.placeNoticeCursor(shard, last[shard]!)
  }
}
