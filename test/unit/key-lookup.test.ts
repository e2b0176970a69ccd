import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import type { ApiKeyStore } from '../../shared/store/api-keys/api-key-store.js'
import { KeyCache } from '../../verifier/key-cache.js'
import { KeyLookup } from '../../verifier/key-lookup.js'

const record = (rev: number, enabled = true): KeyRecord => ({
  id: 'key_a',
  hash: 'h',
  apiId: 'api_a',
  start: 's',
  enabled,
  createdAt: 0,
  rev,
})

/** A store whose reads answer from a script, each read pausing so that events can arrive "during" it. */
function scriptedStore(answers: (KeyRecord | null)[], during: (read: number) => void): ApiKeyStore {
  let reads = 0
  return {
    getKeyByHash: async () => {
      const read = reads++
      await new Promise((resolve) => setImmediate(resolve))
      during(read)
      return answers[Math.min(read, answers.length - 1)] ?? null
    },
  } as unknown as ApiKeyStore
}

describe('KeyLookup (the miss path)', () => {
  const cacheOptions = { maxKeys: 10, maxUnknown: 10, unknownTtlMs: 60_000 }

  it('re-reads a record older than an event that arrived during the read, and caches the newer one', async () => {
    const cache = new KeyCache(cacheOptions)
    // The store's script runs during a read, when `lookup` is long assigned.
    const store = scriptedStore([record(1, true), record(2, false)], (read) => {
      if (read === 0) lookup.changed({ hash: 'h', rev: 2, kind: 'updated' })
    })
    const lookup = new KeyLookup(store, cache)
    expect(await lookup.read('h')).toMatchObject({ rev: 2, enabled: false })
    expect(cache.get('h')).toMatchObject({ rev: 2 })
  })

  it("refuses a record of another key (a confused connection's answer): 503, nothing cached", async () => {
    const cache = new KeyCache(cacheOptions)
    const lookup = new KeyLookup(
      scriptedStore([{ ...record(1), hash: 'other' }], () => {}),
      cache,
    )
    await expect(lookup.read('h')).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(cache.get('h')).toBeUndefined()
    // Forgotten: the next read asks the store again.
    await expect(lookup.read('h')).rejects.toThrow(/another key/)
  })

  it('accepts "no record" after a delete event, but not after a create event', async () => {
    const cache = new KeyCache(cacheOptions)
    const lookup: KeyLookup = new KeyLookup(
      scriptedStore([null], (read) => read === 0 && lookup.changed({ hash: 'h', rev: 3, kind: 'deleted' })),
      cache,
    )
    expect(await lookup.read('h')).toBeNull()

    let reads = 0
    const created = new KeyLookup(
      scriptedStore([null, record(4)], (read) => {
        reads++
        if (read === 0) created.changed({ hash: 'h', rev: 4, kind: 'created' })
      }),
      new KeyCache(cacheOptions),
    )
    expect(await created.read('h')).toMatchObject({ rev: 4 })
    expect(reads).toBe(2)
  })

  it('answers 503 rather than a record older than a change it has seen', async () => {
    const cache = new KeyCache(cacheOptions)
    const lookup: KeyLookup = new KeyLookup(
      scriptedStore([record(1, true)], () => lookup.changed({ hash: 'h', rev: 9, kind: 'updated' })),
      cache,
    )
    await expect(lookup.read('h')).rejects.toBeInstanceOf(StoreUnavailableError)
    expect(cache.get('h')).toBeUndefined()
  })

  it('does not cache a read that started before the cache was cleared', async () => {
    const cache = new KeyCache(cacheOptions)
    const lookup = new KeyLookup(
      scriptedStore([record(1)], () => cache.clear()),
      cache,
    )
    expect(await lookup.read('h')).toMatchObject({ rev: 1 })
    expect(cache.get('h')).toBeUndefined()
  })

  it('fails fast past the cap on distinct keys in flight, while requests for a key in flight share its read', async () => {
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    let reads = 0
    const store = {
      getKeyByHash: async () => {
        reads++
        await gate
        return null
      },
    } as unknown as ApiKeyStore
    const lookup = new KeyLookup(store, new KeyCache(cacheOptions), 2)
    const first = lookup.read('h1')
    const second = lookup.read('h2')
    const joined = lookup.read('h1')
    await expect(lookup.read('h3')).rejects.toBeInstanceOf(StoreUnavailableError)
    release()
    expect(await Promise.all([first, second, joined])).toEqual([null, null, null])
    expect(reads).toBe(2)
    expect(await lookup.read('h3')).toBeNull()
  })
})
