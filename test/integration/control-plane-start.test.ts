import { pino } from 'pino'
import { afterEach, describe, expect, it } from 'vitest'
import { assembleControlPlane } from '../../cli/assemble-control-plane.js'
import { monotonicClock, systemClock } from '../../shared/clock.js'
import type { Store } from '../../shared/store/store.js'
import { DEFAULT_WEBHOOK_POLICY } from '../../control-plane/webhooks/webhook-policy.js'
import { DEFAULT_SYNC, openBackend, TEST_ROOT_KEY, type Backend } from '../support/apps.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { overriding } from '../support/store-overrides.js'
import { waitFor } from '../support/wait-for.js'

/**
 * A control plane's work on the store beside its requests — publishing root keys to verifiers, the webhooks' deriver
 * and worker, the rate-limit counts — starts once the store has answered (its verifier's first sync), never before:
 * started on a connection still being made, its first reads would fail and a healthy start would warn. The test holds
 * the first sync and lets it through.
 */
describe("a control plane's work on the store", () => {
  const backends: Backend[] = []
  afterEach(async () => {
    for (const backend of backends.splice(0)) await backend.close()
  })

  /** What the control plane's background work has done to the store (or started), in order. */
  type Work = 'root keys' | 'deriver' | 'worker' | 'rate limits'
  interface HeldSync {
    letSyncThrough: () => void
    /** The verifier's first sync. */
    synced: Promise<void>
  }

  /**
   * A control plane on a store whose first sync waits for `letSyncThrough()`; `work` lists what its background work
   * did. `onReleaseLease` runs when the deriver gives its lease up (as it stops), before the store is asked: it is
   * given the sync's gate and the verifier's first sync.
   */
  async function heldControlPlane(onReleaseLease: (held: HeldSync) => Promise<void> = async () => {}) {
    const backend = await openBackend()
    backends.push(backend)
    const own = backend.store
    const work: Work[] = []
    let letSyncThrough!: () => void
    const syncLetThrough = new Promise<void>((resolve) => (letSyncThrough = resolve))
    let syncAsked = false
    const store: Store = overriding(own, {
      changes: {
        readRevisions: async () => {
          syncAsked = true
          await syncLetThrough
          return own.changes.readRevisions()
        },
      },
      rootKeys: {
        moveLegacyRootKeys: () => {
          work.push('root keys')
          return own.rootKeys.moveLegacyRootKeys()
        },
      },
      webhooks: {
        holdLease: (...args) => {
          work.push('deriver')
          return own.webhooks.holdLease(...args)
        },
        claimDue: (...args) => {
          work.push('worker')
          return own.webhooks.claimDue(...args)
        },
        releaseLease: async (...args) => {
          await onReleaseLease({ letSyncThrough, synced: plane.verifier.synced })
          return own.webhooks.releaseLease(...args)
        },
      },
    })
    const plane = assembleControlPlane(
      { store, feed: backend.feed, clock: systemClock, elapsed: monotonicClock, log: pino({ level: 'silent' }) },
      {
        bodyLimitBytes: 1_048_576,
        docsBaseUrl: '/docs',
        cache: { maxKeys: 100, maxUnknown: 100, unknownTtlMs: 1_000 },
        sync: DEFAULT_SYNC,
        bootstrapRootKey: TEST_ROOT_KEY,
        webhookPolicy: DEFAULT_WEBHOOK_POLICY,
      },
    )
    // The rate-limit counts reconcile on a timer and touch the store only once counted: their start is what is seen.
    const startCounts = plane.ratelimits.start.bind(plane.ratelimits)
    plane.ratelimits.start = () => {
      work.push('rate limits')
      startCounts()
    }
    const synced = plane.verifier.start()
    await plane.app.ready()
    await waitFor(() => syncAsked, 'the first sync to ask the store')
    // What must not happen before the sync lands: work started at ready, which would have asked the store by now (the
    // deriver and the worker look at once, on a 0 ms timer).
    await nothingHappensFor(0)
    return { ...plane, work, letSyncThrough, synced }
  }

  it('starts once the store has answered the first sync, and not before', async () => {
    const plane = await heldControlPlane()
    try {
      expect(plane.work).toEqual([])
      plane.letSyncThrough()
      await plane.synced
      await waitFor(
        () => ['root keys', 'deriver', 'worker', 'rate limits'].every((done) => plane.work.includes(done as Work)),
        'the work on the store to start',
      )
    } finally {
      await plane.app.close()
    }
  })

  it('never starts when the first sync lands while the control plane closes', async () => {
    // The sync lands as the webhooks stop, before the verifier does: nothing may start again after its stop.
    const plane = await heldControlPlane(async ({ letSyncThrough, synced }) => {
      letSyncThrough()
      await synced
    })
    await plane.app.close()
    await plane.synced
    // What must not happen once the sync has landed on a closed control plane: work started (on a 0 ms timer).
    await nothingHappensFor(0)
    expect(plane.work).toEqual([])
  })
})
