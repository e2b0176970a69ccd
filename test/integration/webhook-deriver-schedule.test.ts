import { Registry } from 'prom-client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  BATCH,
  DERIVER_LEASE,
  DERIVER_LEASE_MS,
  type EventDeriver,
  type EventDeriverDeps,
} from '../../control-plane/webhooks/events/event-deriver.js'
import { createWebhookMetrics } from '../../control-plane/webhooks/webhook-metrics.js'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { ChangeFeed, ChangeFeedHandlers } from '../../shared/feed/change-feed.js'
import { tapChangeFeed } from '../../shared/feed/tapped-change-feed.js'
import { SHARD_COUNT, shardOf } from '../../shared/shards.js'
import { deriverStage } from '../support/deriver-stage.js'
import { overriding } from '../support/store-overrides.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * The deriver as it runs in a control plane (start(), its own timers), on the memory store: a published change is
 * derived at once, one whose message never came by the next full look, and a deriver that stops hands over to the
 * next one that asks for the lease. What wakes it between full looks (every 5 s) is tested against that period: each
 * such test acts just after the deriver's first look, and expects its event well before the next full one.
 */
describe('EventDeriver running on its own', () => {
  let stage: Awaited<ReturnType<typeof deriverStage>>
  const running: EventDeriver[] = []

  beforeEach(async () => {
    stage = await deriverStage()
  })
  afterEach(async () => {
    await Promise.all(running.splice(0).map((deriver) => deriver.stop()))
  })

  const started = (holder: string, extra: Partial<EventDeriverDeps> = {}) => {
    const deriver = stage.deriver(holder, extra)
    running.push(deriver)
    deriver.start()
    return deriver
  }
  /** The key.created queued for `keyId`, once it is: how long after `since` that was, ms. */
  const queuedAfter = async (keyId: string, since: number, timeoutMs: number) => {
    const seen = new Set<string>()
    await waitFor(
      async () => {
        for (const [type, , id] of await stage.queued()) if (type === 'key.created') seen.add(String(id))
        return seen.has(keyId)
      },
      `key.created of ${keyId}`,
      timeoutMs,
      20,
    )
    return Date.now() - since
  }
  /** The cursors are placed: the deriver's first look is done, and what is written from now on is news. */
  const firstLookDone = () =>
    waitFor(async () => (await stage.store.webhooks.readCursors()).size > 0, 'the first look', 5_000, 20)

  it('derives a change it is told of at once, and one it is not told of by its next full look', async () => {
    const api = await newApi(stage.store)
    const deriver = started('a')
    await firstLookDone()
    let since = Date.now()
    const told = await stage.createKey(api.id)
    deriver.changed(told.event)
    // Well before the next full look (the bounds leave room for a busy machine).
    expect(await queuedAfter(told.record.id, since, 2_000)).toBeLessThan(2_000)
    // Its message lost: the full look, every 5 s, finds it.
    since = Date.now()
    const untold = await stage.createKey(api.id)
    expect(await queuedAfter(untold.record.id, since, 8_000)).toBeLessThan(8_000)
  })

  it('hands over when it stops: the next deriver to ask takes the lease and derives what came meanwhile', async () => {
    const api = await newApi(stage.store)
    const first = started('a')
    await firstLookDone()
    const second = started('b')
    const before = await stage.createKey(api.id)
    first.changed(before.event)
    second.changed(before.event)
    await queuedAfter(before.record.id, Date.now(), 2_000)
    await first.stop()
    // Written before b holds the lease, and never told to it: b's first look as the holder derives it, a second or so
    // later (b asks every second), well before the full look that would otherwise find it.
    const since = Date.now()
    const after = await stage.createKey(api.id)
    expect(await queuedAfter(after.record.id, since, 4_000)).toBeLessThan(4_000)
  })
})

describe('EventDeriver woken between its full looks', () => {
  let stage: Awaited<ReturnType<typeof deriverStage>>
  const running: EventDeriver[] = []
  /** Every row queued so far ([type, endpoint id, key id]): stage.queued() hands each over once. */
  let rows: (readonly [string, string, unknown])[]

  beforeEach(async () => {
    stage = await deriverStage()
    rows = []
  })
  afterEach(async () => {
    await Promise.all(running.splice(0).map((deriver) => deriver.stop()))
  })

  const started = (holder: string, extra: Partial<EventDeriverDeps> = {}) => {
    const deriver = stage.deriver(holder, extra)
    running.push(deriver)
    deriver.start()
    return deriver
  }
  /** The deriver's first look is done (it places the cursors, then reads every shard's notices). */
  const firstLookDone = () =>
    waitFor(async () => (await stage.store.webhooks.readNoticeCursors()).size > 0, 'the first look', 5_000, 10)
  /** The rows `matching` picks, once there are `count` of them, within `timeoutMs`. */
  const queuedRows = async (
    matching: (row: readonly [string, string, unknown]) => boolean,
    timeoutMs: number,
    count = 1,
  ) => {
    const found = () => rows.filter((row) => row[1] === 'whep_all' && matching(row))
    await waitFor(
      async () => {
        rows.push(...(await stage.queued()))
        return found().length >= count
      },
      `${count} matching rows`,
      timeoutMs,
      10,
    )
    return found()
  }
  const createdOf = (keyId: string) => (row: readonly [string, string, unknown]) =>
    row[0] === 'key.created' && row[2] === keyId
  /** A new key of the api whose record is in `shard`. */
  const keyInShard = async (apiId: string, shard: number) => {
    let key = newKey(apiId)
    while (shardOf(key.hash) !== shard) key = newKey(apiId)
    const write = await stage.store.keys.createKey(key)
    if (!write) throw new Error('create failed')
    return write
  }

  // The feed loses what is published while it is down: the deriver must look at every shard once it is back.
  it('looks at every shard at once when the change feed it taps subscribes again', async () => {
    const api = await newApi(stage.store)
    const feed = cuttable(stage.feed)
    const deriver = started('a')
    // As the control plane wires it: the tap on the feed its verifier subscribes to.
    await tapChangeFeed(feed, deriver.tap).subscribe({ onEvent() {}, onSubscribed() {}, onDisconnected() {} })
    await firstLookDone()
    feed.cut()
    const unheard = await stage.createKey(api.id)
    const since = Date.now()
    feed.restore()
    await queuedRows(createdOf(unheard.record.id), 2_000)
    expect(Date.now() - since).toBeLessThan(2_000)
    // And heard again: a change published now is derived at once.
    const heard = await stage.createKey(api.id)
    await queuedRows(createdOf(heard.record.id), 2_000)
  })

  it('judges a shard it is told of against its head, as the full look does: a log that went back, or was reset', async () => {
    const api = await newApi(stage.store)
    const registry = new Registry()
    const deriver = started('a', { metrics: createWebhookMetrics(registry, async () => 0) })
    await firstLookDone()
    const first = await stage.createKey(api.id)
    const { shard, epoch, rev } = first.event
    deriver.changed(first.event)
    await queuedRows(createdOf(first.record.id), 2_000)
    const gaps = async () => (await registry.getSingleMetricAsString('keygate_webhook_log_gaps_total')) ?? ''
    // Went back: the cursor past the head in its epoch, as after a failover to a replica that missed two writes.
    await stage.store.webhooks.writeCursor(shard, { epoch, rev: rev + 2 })
    const rewritten = await keyInShard(api.id, shard)
    deriver.changed(rewritten.event)
    await waitFor(async () => /reason="rollback"} 1/.test(await gaps()), 'the rollback counted', 2_000, 10)
    expect((await stage.store.webhooks.readCursors()).get(shard)).toEqual({ epoch, rev: rev + 1 })
    // Its revision reused, the change past it is news.
    const next = await keyInShard(api.id, shard)
    deriver.changed(next.event)
    await queuedRows(createdOf(next.record.id), 2_000)
    // Reset: the cursor of an epoch the shard no longer has (Redis lost the shard's data).
    await stage.store.webhooks.writeCursor(shard, { epoch: `${epoch}-lost`, rev: rev + 50 })
    const afterReset = await keyInShard(api.id, shard)
    deriver.changed(afterReset.event)
    await waitFor(async () => /reason="epoch"} 1/.test(await gaps()), 'the reset counted', 2_000, 10)
    expect((await stage.store.webhooks.readCursors()).get(shard)).toEqual({ epoch, rev: afterReset.event.rev })
    const last = await keyInShard(api.id, shard)
    deriver.changed(last.event)
    await queuedRows(createdOf(last.record.id), 2_000)
    // What the full look would have skipped is skipped, and nothing is sent twice.
    expect(rows.filter(([type, endpoint]) => type === 'key.created' && endpoint === 'whep_all')).toEqual(
      [first, next, last].map(({ record }) => ['key.created', 'whep_all', record.id]),
    )
  })

  it('reads a shard it is told of again at once while a read of it comes back full', async () => {
    const api = await newApi(stage.store)
    const deriver = started('a')
    await firstLookDone()
    let { record, event } = await stage.createKey(api.id)
    // More than a batch of changes in one shard, told of once.
    const updates = BATCH + 50
    for (let i = 0; i < updates; i++) {
      const write = await stage.store.keys.updateKey(record.id, { name: `n${i}` }, record.rev, stage.clock.now())
      if (!write) throw new Error('update failed')
      ;({ record, event } = write)
    }
    deriver.changed(event)
    const since = Date.now()
    await queuedRows(([type]) => type === 'key.updated', 2_500, updates)
    expect(Date.now() - since).toBeLessThan(2_500)
  })

  it('looks at every shard once it takes the lease back: what came while another held it is found at once', async () => {
    const api = await newApi(stage.store)
    const { webhooks } = stage.store
    const asked: boolean[] = []
    const deriver = started('a', {
      webhooks: overriding(stage.store, {
        webhooks: {
          holdLease: async (...args) => {
            const held = await webhooks.holdLease(...args)
            asked.push(held)
            return held
          },
        },
      }).webhooks,
    })
    await firstLookDone()
    // Another control plane takes the lease once a's has run out (a stalled past it).
    stage.clock.advance(DERIVER_LEASE_MS + 1)
    expect(await webhooks.holdLease(DERIVER_LEASE, 'b', DERIVER_LEASE_MS)).toBe(true)
    await waitFor(() => asked.at(-1) === false, 'a to find its lease taken', 3_000, 10)
    // Written while b holds the lease, and b gone before it derived it: a, not the holder, does not take the hint.
    const meanwhile = await stage.createKey(api.id)
    deriver.changed(meanwhile.event)
    await webhooks.releaseLease(DERIVER_LEASE, 'b')
    await waitFor(() => asked.at(-1) === true, 'a to take the lease back', 3_000, 10)
    const since = Date.now()
    await queuedRows(createdOf(meanwhile.record.id), 6_000)
    expect(Date.now() - since).toBeLessThan(1_000)
  })

  it('reads the notices it took from a hint again when that read failed: at its retry, and once', async () => {
    const api = await newApi(stage.store)
    const { changes } = stage.store
    const reads = { all: 0, failNext: false }
    const deriver = started('a', {
      changes: overriding(stage.store, {
        changes: {
          readCreditNotices: async (...args) => {
            reads.all++
            if (reads.failNext) {
              reads.failNext = false
              throw new StoreUnavailableError('Redis went away')
            }
            return changes.readCreditNotices(...args)
          },
        },
      }).changes,
    })
    await firstLookDone()
    await waitFor(() => reads.all >= SHARD_COUNT, 'the first look to read every shard’s notices', 2_000, 10)
    const created = await stage.createKey(api.id, { remaining: 1 })
    const { hash, id: keyId } = created.record
    await stage.store.keys.spendCredits(hash, 1, undefined, stage.clock.now(), { keyId, apiId: api.id })
    reads.failNext = true
    deriver.noticed(created.event.shard)
    const since = Date.now()
    const exhausted = ([type, , id]: readonly [string, string, unknown]) =>
      type === 'key.credits.exhausted' && id === keyId
    await queuedRows(exhausted, 4_000)
    // At the retry a second after the failure, not at the next read of every shard's notices (10 s after the first).
    expect(Date.now() - since).toBeLessThan(4_000)
    expect(reads.failNext).toBe(false)
    expect(rows.filter(exhausted)).toHaveLength(1)
  })
})

/** `feed`, as one that can go down (what is published meanwhile is lost) and come back (subscribed again). */
function cuttable(feed: ChangeFeed): ChangeFeed & { cut(): void; restore(): void } {
  let handlers: ChangeFeedHandlers | undefined
  let up = true
  return {
    kind: feed.kind,
    subscribe: async (subscriber) => {
      handlers = subscriber
      await feed.subscribe({
        onEvent: (event) => {
          if (up) subscriber.onEvent(event)
        },
        onCreditNotice: (shard) => {
          if (up) subscriber.onCreditNotice?.(shard)
        },
        onSubscribed: () => subscriber.onSubscribed(),
        onDisconnected: () => subscriber.onDisconnected(),
      })
    },
    close: () => feed.close(),
    cut: () => {
      up = false
      handlers?.onDisconnected()
    },
    restore: () => {
      up = true
      handlers?.onSubscribed()
    },
  }
}
