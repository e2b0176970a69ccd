import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { createMemoryStore, type MemoryStore } from '../../shared/store/memory-store.js'
import { storeContract } from './store.contract.js'

/** Reaches into the memory store's log the way XTRIM reaches into a Redis stream: test-only fault injection. */
function trimMemoryLog(store: MemoryStore, shard: number, keep: number): void {
  const log = (store.changes as unknown as { logs: unknown[][] }).logs[shard]!
  log.splice(0, Math.max(0, log.length - keep))
}

storeContract('memory', async () => {
  const feed = new MemoryChangeFeed()
  const store = createMemoryStore(feed)
  return {
    store,
    feed,
    trimLog: async (shard, keep) => trimMemoryLog(store, shard, keep),
    close: () => feed.close(),
  }
})
