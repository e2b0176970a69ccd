import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { EventDeriver } from '../../control-plane/webhooks/event-deriver.js'
import { deriverStage } from '../support/deriver-stage.js'
import { waitFor } from '../support/wait-for.js'
import { newApi } from './contract-records.js'

/**
 * The deriver as it runs in a control plane (start(), its own timers), on the memory store: a published change is
 * derived at once, one whose message never came by the next full look, and a deriver that stops hands over to the
 * next one that asks for the lease.
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

  const started = (holder: string) => {
    const deriver = stage.deriver(holder)
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
