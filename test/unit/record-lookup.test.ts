import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { RecordLookup, type LookupCache } from '../../verifier/record-lookup.js'

interface Rec {
  rev: number
}

const cache = (): LookupCache<Rec> & { offered: [string, Rec | null][] } => {
  const offered: [string, Rec | null][] = []
  return { epoch: 0, offered, offer: (id, record) => offered.push([id, record]) }
}

// Each read forgets its pending entry however it ends: a pending entry left behind would answer every later miss of
// the id with the same settled promise (a key stuck on one Redis error, or on one burst of changes, until restart).
describe('RecordLookup: a read ends, then the id is read afresh', () => {
  it('reads again after a read that was refused', async () => {
    let reads = 0
    const lookup = new RecordLookup<Rec>(
      () => (++reads === 1 ? Promise.reject(new StoreUnavailableError('down')) : Promise.resolve({ rev: 1 })),
      cache(),
    )
    await expect(lookup.read('a')).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(await lookup.read('a')).toEqual({ rev: 1 })
    expect(reads).toBe(2)
  })

  it('turns a reader that throws into a refusal, and reads again after it', async () => {
    let reads = 0
    const lookup = new RecordLookup<Rec>((): Promise<Rec | null> => {
      if (++reads === 1) throw new Error('thrown, not rejected')
      return Promise.resolve({ rev: 1 })
    }, cache())
    // read() itself must not throw: its callers only handle a rejected promise.
    const first = lookup.read('a')
    await expect(first).rejects.toThrow('thrown, not rejected')
    expect(await lookup.read('a')).toEqual({ rev: 1 })
  })

  it('reads exactly 4 times while the record keeps changing, then answers 503, and reads again afterwards', async () => {
    let reads = 0
    const store = cache()
    const lookup: RecordLookup<Rec> = new RecordLookup<Rec>(async () => {
      reads++
      await new Promise((resolve) => setImmediate(resolve))
      // A change newer than this read's answer arrives while it is in flight.
      lookup.changed({ hash: 'a', rev: reads + 1, kind: 'updated' })
      return { rev: reads }
    }, store)
    await expect(lookup.read('a')).rejects.toThrow('record kept changing during 4 reads')
    expect(reads).toBe(4)
    expect(store.offered).toEqual([])
    // The next miss reads again rather than sharing the refusal.
    reads = 10
    await expect(lookup.read('a')).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(reads).toBe(14)
  })

  it('accepts the 4th read when it is the first one current', async () => {
    let reads = 0
    const store = cache()
    const lookup: RecordLookup<Rec> = new RecordLookup<Rec>(async () => {
      reads++
      await new Promise((resolve) => setImmediate(resolve))
      if (reads < 4) lookup.changed({ hash: 'a', rev: 4, kind: 'updated' })
      return { rev: reads }
    }, store)
    expect(await lookup.read('a')).toEqual({ rev: 4 })
    expect(reads).toBe(4)
    expect(store.offered).toEqual([['a', { rev: 4 }]])
  })
})
