import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { MemoryKeyStore } from '../../shared/store/memory-key-store.js'
import { keyStoreContract } from './key-store.contract.js'

/** Reaches into the memory store's log the way XTRIM reaches into a Redis stream: test-only fault injection. */
function trimMemoryLog(store: MemoryKeyStore, shard: number, keep: number): void {
  const log = (store as unknown as { logs: unknown[][] }).logs[shard]!
  log.splice(0, Math.max(0, log.length - keep))
}

keyStoreContract('memory', async () => {
  const feed = new MemoryChangeFeed()
  const store = new MemoryKeyStore(feed)
  return {
    store,
    feed,
    trimLog: async (shard, keep) => trimMemoryLog(store, shard, keep),
    close: () => feed.close(),
  }
})
