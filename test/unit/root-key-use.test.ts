import { pino } from 'pino'
import { describe, expect, it } from 'vitest'
import { RootKeyUse } from '../../control-plane/root-keys/root-key-use.js'
import type { RootKeyRecord } from '../../shared/keys/records.js'
import { capturedLogger, ManualClock } from '../support/apps.js'
import { nothingHappensFor } from '../support/nothing-happens.js'

const rootKey = (lastUsedAt?: number): RootKeyRecord => ({
  id: 'root_a',
  hash: 'h',
  permissions: ['*'],
  createdAt: 0,
  ...(lastUsedAt === undefined ? {} : { lastUsedAt }),
})

/** A store whose writes wait until the test lets them finish (or fail). */
function heldStore() {
  const writes: { atMs: number; finish: () => void; fail: (err: Error) => void }[] = []
  return {
    writes,
    touchRootKey: (_hash: string, atMs: number) =>
      new Promise<void>((finish, fail) => writes.push({ atMs, finish, fail })),
  }
}

describe('recording the last use of root keys', () => {
  it('writes at most once a minute per root key, judged by the stored last use and its own writes', () => {
    const clock = new ManualClock(1_000_000)
    const store = heldStore()
    const use = new RootKeyUse(store, clock, pino({ level: 'silent' }))
    use.record(rootKey())
    use.record(rootKey()) // the same minute: the write above is enough, even while it is in flight
    expect(store.writes.map((w) => w.atMs)).toEqual([1_000_000])
    clock.advance(60_000)
    use.record(rootKey(clock.now() - 1)) // another control plane wrote a moment ago
    expect(store.writes).toHaveLength(1)
    use.record(rootKey(1_000_000))
    expect(store.writes.map((w) => w.atMs)).toEqual([1_000_000, 1_060_000])
  })

  it('never holds the call up: record returns at once, a failed write is logged, settle waits for writes in flight', async () => {
    const clock = new ManualClock()
    const store = heldStore()
    const { log, lines } = capturedLogger()
    const use = new RootKeyUse(store, clock, log)
    use.record(rootKey()) // returns although the write has not finished
    let settled = false
    const settling = use.settle().then(() => (settled = true))
    // What must not happen while the write is in flight: settle() resolving.
    await nothingHappensFor(10)
    expect(settled).toBe(false)
    store.writes[0]!.fail(new Error('Redis went away'))
    await settling
    expect(lines.join('')).toContain('last use of a root key not recorded')
    expect(lines.join('')).toContain('root_a')
  })
})
