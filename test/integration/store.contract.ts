import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChangeEvent } from '../../shared/change-event.js'
import type { ChangeFeed } from '../../shared/feed/change-feed.js'
import type { Store } from '../../shared/store/store.js'
import { apiKeyStoreContract } from './api-key-store.contract.js'
import { auditStoreContract } from './audit-store.contract.js'
import { changeLogStoreContract } from './change-log-store.contract.js'
import { changeSnapshotStoreContract } from './change-snapshot-store.contract.js'
import { counterStoreContract } from './counter-store.contract.js'
import { entityStoreContract } from './entity-store.contract.js'
import { leakReportStoreContract } from './leak-report-store.contract.js'
import { portalSessionStoreContract } from './portal-session-store.contract.js'
import { rootKeyStoreContract } from './root-key-store.contract.js'
import { analyticsBufferStoreContract } from './analytics-buffer-store.contract.js'
import { webhookStoreContract } from './webhook-store.contract.js'

export interface StoreHarness {
  store: Store
  feed: ChangeFeed
  /** Makes the shard's change log keep only its last `keep` entries (as trimming under load would). */
  trimLog(shard: number, keep: number): Promise<void>
  close(): Promise<void>
}

/**
 * The store's contract with its change feed, part by part (each part's suite beside this file), run against every
 * implementation (memory and Redis): the embedded default must behave exactly like production.
 */
export function storeContract(name: string, open: () => Promise<StoreHarness>): void {
  describe(`Store contract: ${name}`, () => {
    let harness: StoreHarness
    const events: ChangeEvent[] = []
    let subscribedCalls = 0
    const opened = () => harness.store

    beforeAll(async () => {
      harness = await open()
      await harness.feed.subscribe({
        onEvent: (e) => events.push(e),
        onSubscribed: () => subscribedCalls++,
        onDisconnected: () => {},
      })
    })
    afterAll(async () => {
      await harness.close()
    })

    it('calls onSubscribed once the subscription is live', () => {
      expect(subscribedCalls).toBe(1)
    })

    apiKeyStoreContract(opened, events)
    changeLogStoreContract(opened, { trimLog: (shard, keep) => harness.trimLog(shard, keep) })
    changeSnapshotStoreContract(opened)
    rootKeyStoreContract(() => harness.store.rootKeys)
    entityStoreContract(opened, events)
    counterStoreContract(() => harness.store.counters)
    analyticsBufferStoreContract(() => harness.store.analyticsBuffer)
    auditStoreContract(() => harness.store.audit)
    webhookStoreContract(() => harness.store.webhooks)
    leakReportStoreContract(() => harness.store.leakReports)
    portalSessionStoreContract(() => harness.store.portalSessions)

    it('answers ping when it can serve', async () => {
      await expect(harness.store.ping()).resolves.toBeUndefined()
    })
  })
}
