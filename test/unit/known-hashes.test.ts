import { randomBytes } from 'node:crypto'
import { pino } from 'pino'
import { Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { hashKey } from '../../shared/keys/key-material.js'
import { shardOf } from '../../shared/shards.js'
import { BloomFilter, HashWords } from '../../verifier/bloom-filter.js'
import { KnownHashes } from '../../verifier/known-hashes.js'
import { waitFor } from '../support/wait-for.js'

const randomHash = () => hashKey(randomBytes(16).toString('hex'))
const hashes = (n: number) => Array.from({ length: n }, randomHash)

describe('BloomFilter', () => {
  it('never forgets a hash, and errs on about 1% of others at capacity', () => {
    const filter = new BloomFilter(50_000)
    const added = hashes(filter.capacity)
    for (const hash of added) filter.add(hash)
    expect(added.every((hash) => filter.has(hash))).toBe(true)
    const falsePositives = hashes(100_000).filter((hash) => filter.has(hash)).length
    expect(falsePositives / 100_000).toBeGreaterThan(0.002)
    expect(falsePositives / 100_000).toBeLessThan(0.015)
    expect(filter.fillRatio).toBeGreaterThan(0.45)
    expect(filter.fillRatio).toBeLessThan(0.55)
    expect(filter.count).toBeGreaterThan(filter.capacity * 0.99)
    // Adds that set no new bit (false positives themselves) are not counted: a few more make it overfull.
    for (let i = 0; i < 2_000 && !filter.overfull; i++) filter.add(randomHash())
    expect(filter.count).toBe(filter.capacity + 1)
  })

  it('takes hashes gathered as fingerprint words as it takes the strings', () => {
    const added = hashes(10_000)
    const words = new HashWords()
    for (const hash of added) words.add(hash)
    const fromWords = new BloomFilter(words.length)
    words.addTo(fromWords)
    const fromStrings = new BloomFilter(added.length)
    for (const hash of added) fromStrings.add(hash)
    const probes = hashes(10_000)
    expect(probes.map((hash) => fromWords.has(hash))).toEqual(probes.map((hash) => fromStrings.has(hash)))
    expect(added.every((hash) => fromWords.has(hash))).toBe(true)
    expect(fromWords.fillRatio).toBe(fromStrings.fillRatio)
  })
})

/** A store whose scan hands out `stored` in two batches, the second only once `release` is called. */
function heldScan(stored: string[]) {
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  let scans = 0
  return {
    get scans() {
      return scans
    },
    release,
    store: {
      async *scanKeyHashes() {
        scans++
        yield stored.slice(0, stored.length / 2)
        await released
        yield stored.slice(stored.length / 2)
      },
    },
  }
}

const newKnown = (store: { scanKeyHashes(): AsyncIterable<string[]> }) =>
  new KnownHashes(store, pino({ level: 'silent' }), new Registry())

describe('KnownHashes', () => {
  it('is unsure of every hash until built, then knows the stored ones and those created during the build', async () => {
    const stored = hashes(1_000)
    const scan = heldScan(stored)
    const known = newKnown(scan.store)
    const unknown = randomHash()
    expect(known.mayExist(unknown)).toBe(true)
    known.start()
    await waitFor(() => scan.scans === 1, 'the scan to start')
    // Created while the scan runs, and perhaps after it passed the key's place: the change adds it.
    const created = randomHash()
    known.add(created)
    expect(known.mayExist(unknown)).toBe(true)
    scan.release()
    await waitFor(() => !known.mayExist(unknown), 'the build')
    expect([...stored, created].every((hash) => known.mayExist(hash))).toBe(true)
    const later = randomHash()
    known.add(later)
    expect(known.mayExist(later)).toBe(true)
    known.stop()
  })

  it('stays unsure of a shard dropped during a build, and trusts it again after the next build', async () => {
    const stored = hashes(1_000)
    const scan = heldScan(stored)
    const known = newKnown(scan.store)
    known.start()
    await waitFor(() => scan.scans === 1, 'the scan to start')
    const dropped = shardOf(stored[0]!)
    known.dropShard(dropped)
    scan.release()
    const elsewhere = hashes(200).find((hash) => shardOf(hash) !== dropped)!
    await waitFor(() => !known.mayExist(elsewhere), 'the first build')
    const inDropped = Array.from({ length: 10_000 }, randomHash).filter((hash) => shardOf(hash) === dropped)
    expect(inDropped.every((hash) => known.mayExist(hash))).toBe(true)
    // The second build comes after a pause (a shard dropped over and over must not mean back-to-back scans).
    await waitFor(() => scan.scans === 2, 'the rebuild', 3_000)
    await waitFor(() => inDropped.some((hash) => !known.mayExist(hash)), 'the shard to be trusted again')
    expect(stored.every((hash) => known.mayExist(hash))).toBe(true)
    known.stop()
  })

  it('rebuilds, larger, once more keys were created than it was sized for', async () => {
    const registry = new Registry()
    let scans = 0
    const stored: string[] = []
    const known = new KnownHashes(
      {
        async *scanKeyHashes() {
          scans++
          yield [...stored]
        },
      },
      pino({ level: 'silent' }),
      registry,
    )
    known.start()
    await waitFor(() => scans === 1 && !known.mayExist(randomHash()), 'the first build')
    const bits = async () => (await registry.getSingleMetric('keygate_verify_filter_bits')!.get()).values[0]!.value
    const first = await bits()
    // Well past its capacity: the one build it triggers is sized from what the store holds then.
    const created = hashes(first / 10 + 100)
    for (const hash of created) {
      stored.push(hash)
      known.add(hash)
    }
    await waitFor(async () => scans === 2 && (await bits()) > first, 'the rebuild', 3_000)
    expect(created.every((hash) => known.mayExist(hash))).toBe(true)
    const unsure = (await registry.getSingleMetric('keygate_verify_filter_unsure_shards')!.get()).values[0]!.value
    expect(unsure).toBe(0)
    known.stop()
  })
})
