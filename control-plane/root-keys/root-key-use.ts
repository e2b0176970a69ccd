import { LRUCache } from 'lru-cache'
import type { Logger } from 'pino'
import type { Clock } from '../../shared/clock.js'
import type { RootKeyRecord } from '../../shared/keys/records.js'
import type { RootKeyStore } from '../../shared/store/root-keys/root-key-store.js'

/** How often a root key's last use is written, at most, by each control plane. */
export const LAST_USE_INTERVAL_MS = 60_000

/**
 * Records when root keys are used without making every management call a write: a root key whose stored last use
 * (or the last one this process wrote) is under a minute old is not written again, and the write is not awaited by
 * the request (best effort: a failure is logged). Writes in flight are tracked, and `settle` waits for them before
 * the store closes.
 */
export class RootKeyUse {
  /** Root key id → when this process last wrote its use (bounded: a long-lived process meets many root keys). */
  private readonly written = new LRUCache<string, number>({ max: 10_000 })
  private readonly pending = new Set<Promise<void>>()

  constructor(
    private readonly store: Pick<RootKeyStore, 'touchRootKey'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly intervalMs = LAST_USE_INTERVAL_MS,
  ) {}

  /** A management call was authenticated by `rootKey` (as just read from the store). Returns at once. */
  record(rootKey: RootKeyRecord): void {
    const now = this.clock.now()
    const last = Math.max(rootKey.lastUsedAt ?? -Infinity, this.written.get(rootKey.id) ?? -Infinity)
    if (now - last < this.intervalMs) return
    this.written.set(rootKey.id, now)
    const write: Promise<void> = this.store
      .touchRootKey(rootKey.hash, now)
      .catch((err: unknown) => this.log.warn({ err, rootKeyId: rootKey.id }, 'last use of a root key not recorded'))
      .finally(() => this.pending.delete(write))
    this.pending.add(write)
  }

  /** Waits for the writes in flight (they never reject). */
  async settle(): Promise<void> {
    await Promise.all([...this.pending])
  }
}
