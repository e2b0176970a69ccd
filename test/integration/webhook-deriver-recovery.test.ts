import { Registry } from 'prom-client'
import { beforeEach, describe, expect, it } from 'vitest'
import { DEADLINE_LEASE_MS, DERIVER_LEASE_MS } from '../../control-plane/webhooks/events/event-deriver.js'
import { placeMissingCursors } from '../../control-plane/webhooks/events/webhook-cursors.js'
import { createWebhookMetrics } from '../../control-plane/webhooks/webhook-metrics.js'
import { DEFAULT_WEBHOOK_POLICY } from '../../control-plane/webhooks/webhook-policy.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { WebhookEvent } from '../../shared/webhook.js'
import { shardOf } from '../../shared/shards.js'
import { deriverStage, HOUR, testEndpoint } from '../support/deriver-stage.js'
import { overriding } from '../support/store-overrides.js'
import { newApi, newKey } from './contract-records.js'

/**
 * What the deriver does when things go wrong: a store failing in the middle of a look, a look outlasting its lease,
 * two control planes starting at once, a change log trimmed or reset; and what it forgets when.
 */
describe('EventDeriver through failures, on the memory store', () => {
  let stage: Awaited<ReturnType<typeof deriverStage>>
  beforeEach(async () => {
    stage = await deriverStage()
  })

  /** The store's webhooks, with enqueue failing for the events `failing` picks while it is on. */
  function failingEnqueue(failing: (event: WebhookEvent) => boolean) {
    const state = { on: true }
    const webhooks = overriding(stage.store, {
      webhooks: {
        enqueue: async (event, endpointIds, dueAt) => {
          if (state.on && failing(event)) throw new StoreUnavailableError('Redis went away')
          return stage.store.webhooks.enqueue(event, endpointIds, dueAt)
        },
      },
    }).webhooks
    return { webhooks, state }
  }

  /** New keys of the api until one lands in a shard other than those given (the deriver reads shard by shard). */
  async function keyInAnotherShard(apiId: string, shards: number[]): Promise<{ record: KeyRecord; shard: number }> {
    for (;;) {
      const write = await stage.createKey(apiId)
      if (!shards.includes(write.event.shard)) return { record: write.record, shard: write.event.shard }
    }
  }

  it('moves a cursor only once its events are queued: a look that cannot queue them derives them again', async () => {
    const { store, deriver } = stage
    const api = await newApi(store)
    await deriver().runOnce()
    const created = await stage.createKey(api.id)
    const { webhooks, state } = failingEnqueue((event) => event.type === 'key.created')
    await expect(deriver('test', { webhooks }).runOnce()).rejects.toThrow(StoreUnavailableError)
    state.on = false
    await deriver().runOnce()
    expect(await stage.queued()).toContainEqual(['key.created', 'whep_all', created.record.id])
  })

  it('fires a deadline again after its lease when its event could not be queued, and then no more', async () => {
    const { store, deriver, clock } = stage
    const api = await newApi(store)
    await deriver().runOnce()
    // Expiring within the lead time: key.expiring is due at once, fired in the look that derives the create.
    const created = await stage.createKey(api.id, { expires: clock.now() + HOUR })
    const { webhooks, state } = failingEnqueue((event) => event.type === 'key.expiring')
    await expect(deriver('test', { webhooks }).runOnce()).rejects.toThrow(StoreUnavailableError)
    state.on = false
    const expiring = async () => (await stage.queued()).filter(([type]) => type === 'key.expiring')
    await deriver().runOnce()
    expect(await expiring()).toEqual([])
    clock.advance(DEADLINE_LEASE_MS)
    await deriver().runOnce()
    expect(await expiring()).toEqual([['key.expiring', 'whep_all', created.record.id]])
    clock.advance(DEADLINE_LEASE_MS)
    await deriver().runOnce()
    expect(await expiring()).toEqual([])
  })

  it('stops a look that outlasted its lease before the next shard: another control plane derives by then', async () => {
    const { store, deriver, clock } = stage
    const api = await newApi(store)
    await deriver('a').runOnce()
    const first = await keyInAnotherShard(api.id, [])
    await keyInAnotherShard(api.id, [first.shard])
    const registry = new Registry()
    let stalled = false
    // a's look stalls past its lease on its first key: b takes the lease and derives both keys meanwhile.
    const slow = overriding(store, {
      snapshots: {
        readSnapshots: async (...shard) => {
          if (!stalled) {
            stalled = true
            clock.advance(DERIVER_LEASE_MS + 1)
            await deriver('b').runOnce()
          }
          return store.snapshots.readSnapshots(...shard)
        },
      },
    })
    await deriver('a', { snapshots: slow.snapshots, metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
    expect(stalled).toBe(true)
    // a finished the shard it was in, and derived nothing after it.
    expect(await registry.getSingleMetricAsString('keygate_webhook_events_total')).toMatch(/type="key.created"} 1$/m)
    expect((await stage.queued()).filter(([type]) => type === 'key.created')).toHaveLength(2)
  })

  // A look that outlasted its lease finishes the shard it was in: the cursor it then writes must not take back what
  // the new holder derived meanwhile, or those changes are derived again and sent twice once delivered.
  it('never moves a cursor back when a look that lost its lease finishes its shard after another moved it on', async () => {
    const { store, deriver, clock } = stage
    const api = await newApi(store)
    await deriver('a').runOnce()
    const first = await stage.createKey(api.id)
    const shard = first.event.shard
    let stalled = false
    // a's look stalls past its lease in the first key's shard; meanwhile another key lands there and b derives both.
    const slow = overriding(store, {
      snapshots: {
        readSnapshots: async (...read) => {
          if (!stalled) {
            stalled = true
            for (;;) if ((await stage.createKey(api.id)).event.shard === shard) break
            clock.advance(DERIVER_LEASE_MS + 1)
            await deriver('b').runOnce()
          }
          return store.snapshots.readSnapshots(...read)
        },
      },
    })
    await deriver('a', { snapshots: slow.snapshots }).runOnce()
    expect(stalled).toBe(true)
    const head = await store.changes.readRevision(shard)
    expect((await store.webhooks.readCursors()).get(shard)).toEqual(head)
    // Every key.created b derived is delivered; b's next look sends none of them again.
    expect((await stage.queued()).filter(([type]) => type === 'key.created').length).toBeGreaterThanOrEqual(2)
    await deriver('b').runOnce()
    expect(await stage.queued()).toEqual([])
  })

  it('never moves a notice cursor back when a look that lost its lease finishes its shard after another moved it on', async () => {
    const { store, deriver, clock } = stage
    const api = await newApi(store)
    const created = await stage.createKey(api.id, { remaining: 2 })
    await deriver('a').runOnce()
    const spend = () =>
      store.keys.spendCredits(created.record.hash, 1, undefined, clock.now(), {
        keyId: created.record.id,
        apiId: api.id,
        lowThreshold: 1,
      })
    await spend()
    let stalled = false
    // a's look stalls past its lease on the first notice; meanwhile the key's credits run out and b derives both.
    const slow = overriding(store, {
      webhooks: {
        enqueue: async (event, endpointIds, dueAt) => {
          if (!stalled && event.type === 'key.credits.low') {
            stalled = true
            await spend()
            clock.advance(DERIVER_LEASE_MS + 1)
            await deriver('b').runOnce()
          }
          return store.webhooks.enqueue(event, endpointIds, dueAt)
        },
      },
    })
    await deriver('a', { webhooks: slow.webhooks }).runOnce()
    expect(stalled).toBe(true)
    const shard = created.event.shard
    const last = (await store.changes.lastCreditNoticeIds())[shard]
    expect((await store.webhooks.readNoticeCursors()).get(shard)).toBe(last)
    const credits = async () => (await stage.queued()).filter(([type]) => type.startsWith('key.credits.'))
    expect(await credits()).toHaveLength(2)
    await deriver('b').runOnce()
    expect(await credits()).toEqual([])
  })

  it('never moves a cursor placed meanwhile when it places its own (two control planes placing at once)', async () => {
    const { store, deriver } = stage
    const api = await newApi(store)
    const created = await stage.createKey(api.id, { remaining: 2 })
    // a's first look places every cursor where the logs stand.
    await deriver('a').runOnce()
    const updated = await store.keys.updateKey(
      created.record.id,
      { enabled: false },
      created.record.rev,
      stage.clock.now(),
    )
    const notice = { keyId: created.record.id, apiId: api.id, lowThreshold: 1 }
    await store.keys.spendCredits(created.record.hash, 1, undefined, stage.clock.now(), notice)
    // An endpoint created elsewhere read no cursors before a placed them, and places its own after these writes.
    const stale = overriding(store, {
      webhooks: { readCursors: async () => new Map(), readNoticeCursors: async () => new Map() },
    })
    await placeMissingCursors(store.changes, stale.webhooks)
    await deriver('a').runOnce()
    expect(updated).toBeTruthy()
    expect((await stage.queued()).map(([type, endpointId]) => [type, endpointId])).toEqual(
      expect.arrayContaining([
        ['key.updated', 'whep_all'],
        ['key.credits.low', 'whep_all'],
      ]),
    )
  })

  // The endpoints were read once a look: a change read later in it, written after an endpoint was created, missed it.
  it('queues a change to every endpoint that existed when it was written, one created during the look included', async () => {
    const { store, deriver } = stage
    const api = await newApi(store)
    await deriver().runOnce()
    const first = await keyInAnotherShard(api.id, [])
    const second = await keyInAnotherShard(api.id, [first.shard])
    const high = first.shard < second.shard ? second : first
    // A key of the later shard, stored while the look is on its way to that shard: after the endpoint it must reach.
    let late = newKey(api.id)
    while (shardOf(late.hash) !== high.shard) late = newKey(api.id)
    const during = overriding(store, {
      changes: {
        readChanges: async (shard, afterRev, limit) => {
          if (shard === high.shard) {
            await store.webhooks.createEndpoint(testEndpoint('whep_new'))
            await store.keys.createKey(late)
          }
          return store.changes.readChanges(shard, afterRev, limit)
        },
      },
    })
    await deriver('test', { changes: during.changes }).runOnce()
    const toNew = (await stage.queued()).filter(([, endpointId]) => endpointId === 'whep_new')
    // (It may get the change before it in that shard too: an endpoint can hear of what came just before it.)
    expect(toNew).toContainEqual(['key.created', 'whep_new', late.id])
  })

  it('counts a log trimmed past its cursor as a gap and goes on from the head', async () => {
    const { store, deriver } = stage
    const api = await newApi(store)
    await deriver().runOnce()
    const { shard } = await keyInAnotherShard(api.id, [])
    const sameShard = async () => {
      for (;;) {
        const write = await stage.createKey(api.id)
        if (write.event.shard === shard) return write.record
      }
    }
    await sameShard()
    // As XTRIM would: the shard's log keeps its last entry only.
    const log = (store.changes as unknown as { logs: unknown[][] }).logs[shard]!
    log.splice(0, log.length - 1)
    const registry = new Registry()
    await deriver('test', { metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
    expect(await registry.getSingleMetricAsString('keygate_webhook_log_gaps_total')).toMatch(/reason="trimmed"} 1/)
    await stage.queued()
    const next = await sameShard()
    await deriver().runOnce()
    expect(await stage.queued()).toContainEqual(['key.created', 'whep_all', next.id])
  })

  it('takes a cursor of another epoch (Redis lost the shard) as a gap, not as revisions to derive', async () => {
    const { store, deriver } = stage
    const api = await newApi(store)
    await deriver().runOnce()
    const { shard, epoch, rev } = (await stage.createKey(api.id)).event
    await store.webhooks.writeCursor(shard, { epoch: `${epoch}-before`, rev: 0 })
    const registry = new Registry()
    await deriver('test', { metrics: createWebhookMetrics(registry, async () => 0) }).runOnce()
    expect(await registry.getSingleMetricAsString('keygate_webhook_log_gaps_total')).toMatch(/reason="epoch"} 1/)
    expect(await stage.queued()).toEqual([])
    expect((await store.webhooks.readCursors()).get(shard)).toEqual({ epoch, rev })
  })

  it('forgets events past the retry window and a day, and keeps the others', async () => {
    const { store, deriver, clock } = stage
    const retention = DEFAULT_WEBHOOK_POLICY.retryWindowMs + 24 * HOUR
    const event = (id: string, at: number): WebhookEvent => ({ id, type: 'key.created', at, data: {} })
    await store.webhooks.enqueue(event('msg_old', clock.now() - retention - 1), [], clock.now())
    await store.webhooks.enqueue(event('msg_kept', clock.now() - retention + 1), [], clock.now())
    await deriver().runOnce()
    expect(await store.webhooks.getEvent('msg_old')).toBeNull()
    expect(await store.webhooks.getEvent('msg_kept')).not.toBeNull()
  })
})
