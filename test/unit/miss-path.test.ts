import { randomBytes } from 'node:crypto'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { hashKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { KeyCache } from '../../verifier/key-cache.js'
import type { KeyLookup } from '../../verifier/key-lookup.js'
import type { KnownHashes } from '../../verifier/known-hashes.js'
import { MissPath } from '../../verifier/miss-path.js'
import { nothingHappensFor } from '../support/nothing-happens.js'

/** A miss path whose filter says no to everything, over a sync that counts its polls (each takes `pollMs`). */
function missPath(pollMs: number) {
  const polls: number[] = []
  let reads = 0
  const path = new MissPath(
    { read: async (): Promise<KeyRecord | null> => (reads++, null) } as unknown as KeyLookup,
    { mayExist: () => false } as unknown as KnownHashes,
    new KeyCache({ maxKeys: 10, maxUnknown: 100_000, unknownTtlMs: 60_000 }),
    {
      current: true,
      requestPoll: async () => {
        // The path's own stamp of the poll's start, which its spacing counts from: a stamp taken here could be late by
        // a collector's pause or the process being descheduled between the two (3 ms once, on a loaded CI machine).
        polls.push((path as unknown as { lastStart: number }).lastStart)
        await new Promise((resolve) => setTimeout(resolve, pollMs))
      },
    },
    new Registry(),
  )
  return { path, polls, reads: () => reads }
}

const unknownHash = () => hashKey(randomBytes(16).toString('hex'))

describe('MissPath', () => {
  it('shares one poll between the unknown keys that arrive together, and reads none of them', async () => {
    const { path, polls, reads } = missPath(1)
    const answers = await Promise.all(Array.from({ length: 100 }, () => path.read(unknownHash())))
    expect(answers.every((answer) => answer === null)).toBe(true)
    expect(polls).toHaveLength(1)
    expect(reads()).toBe(0)
  })

  it('under a flood, polls at most once per 10 ms however fast the unknown keys come', async () => {
    const { path, polls } = missPath(0)
    const pending: Promise<unknown>[] = []
    const deadline = performance.now() + 5_000
    while (polls.length < 11 && performance.now() < deadline) {
      pending.push(path.read(unknownHash()))
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all(pending)
    expect(polls.length).toBeGreaterThanOrEqual(11)
    // Each poll served many keys, and none came sooner than 10 ms after the one before.
    expect(pending.length).toBeGreaterThan(5 * polls.length)
    // Each gap at least 10 ms (a little less allowed), and all of them together at least 10 ms each.
    const gaps = polls.slice(1).map((at, i) => at - polls[i]!)
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(8.5)
    expect((polls[polls.length - 1]! - polls[0]!) / gaps.length).toBeGreaterThanOrEqual(9.9)
  })

  it('polls at once for an unknown key that comes alone', async () => {
    const { path, polls } = missPath(0)
    await path.read(unknownHash())
    // No unknown key for longer than the polls' spacing (10 ms): the next one comes alone.
    await nothingHappensFor(20)
    const asked = performance.now()
    await path.read(unknownHash())
    expect(polls).toHaveLength(2)
    expect(polls[1]! - asked).toBeLessThan(8)
  })
})
