/**
 * A Bloom filter of key hashes: `has` is false only for a hash never added; true may be a false positive (about 1%
 * at `capacity` hashes, far fewer below). Additions only — nothing can be removed, which suits a filter that must
 * never forget a key and can afford to remember a deleted one.
 *
 * Why Bloom: it takes additions one at a time forever (the change feed adds hashes as keys are created), never fails
 * an insertion, and degrades gradually when overfilled. A cuckoo filter could delete but refuses inserts when full;
 * xor and binary fuse filters are smaller but must be rebuilt for every addition.
 *
 * The hashes are already SHA-256 (base64): their characters are the hash functions' input, no hashing of our own.
 */
export class BloomFilter {
  readonly bits: number
  /** Hashes it holds at about 1% false positives (its bits rounded up to a power of two may hold more than asked). */
  readonly capacity: number
  /** Hashes added that set at least one new bit (≈ distinct hashes added). */
  count = 0
  private readonly words: Uint32Array
  private readonly mask: number
  private setBits = 0

  /** Sized for `hashes`: BITS_PER_HASH bits each, rounded up to a power of two. */
  constructor(hashes: number) {
    let bits = MIN_BITS
    while (bits < hashes * BITS_PER_HASH && bits < MAX_BITS) bits *= 2
    this.bits = bits
    this.capacity = Math.floor(bits / BITS_PER_HASH)
    this.mask = bits - 1
    this.words = new Uint32Array(bits / 32)
  }

  /** Holds more than its capacity, and a larger one could be made. */
  get overfull(): boolean {
    return this.count > this.capacity && this.bits < MAX_BITS
  }

  add(hash: string): void {
    this.addWords(high(hash), low(hash))
  }

  /** Adds a hash given as its two fingerprint words (HashWords): a build keeps those rather than the strings. */
  addWords(h1: number, h2: number): void {
    let changed = false
    for (let i = 0, position = h1; i < PROBES; i++, position = (position + h2) | 0) {
      const bit = position & this.mask
      const word = bit >>> 5
      const flag = 1 << (bit & 31)
      if ((this.words[word]! & flag) === 0) {
        this.words[word]! |= flag
        this.setBits++
        changed = true
      }
    }
    if (changed) this.count++
  }

  has(hash: string): boolean {
    const h2 = low(hash)
    for (let i = 0, position = high(hash); i < PROBES; i++, position = (position + h2) | 0) {
      const bit = position & this.mask
      if ((this.words[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
    }
    return true
  }

  /** Share of bits set: at capacity about half; the false-positive rate is about this to the power PROBES. */
  get fillRatio(): number {
    return this.setBits / this.bits
  }
}

/**
 * Hashes held as their two fingerprint words, 8 bytes each, growing as needed: what a build gathers from the store
 * before it knows how many there are (the base64 strings of a million keys would take ten times the memory).
 */
export class HashWords {
  private words = new Uint32Array(2 * 1_024)
  length = 0

  add(hash: string): void {
    if (2 * this.length === this.words.length) {
      const grown = new Uint32Array(this.words.length * 2)
      grown.set(this.words)
      this.words = grown
    }
    this.words[2 * this.length] = high(hash)
    this.words[2 * this.length + 1] = low(hash)
    this.length++
  }

  addTo(filter: BloomFilter): void {
    for (let i = 0; i < this.length; i++) filter.addWords(this.words[2 * i]!, this.words[2 * i + 1]!)
  }
}

// 10 bits and 7 probes per hash: ~0.8% false positives at capacity (each costs one Redis read, as a miss does).
const BITS_PER_HASH = 10
const PROBES = 7
const MIN_BITS = 1 << 16
// 2^31 bits = 256 MiB: past ~200 million keys the filter fills up rather than grow further.
const MAX_BITS = 2 ** 31

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
const VALUE = new Uint8Array(128)
for (let i = 0; i < BASE64.length; i++) VALUE[BASE64.charCodeAt(i)] = i

/** 30 bits from characters 2–6 (0–1 choose the shard, so they are skipped: they are alike within a shard). */
function high(hash: string): number {
  return word(hash, 2)
}

/** 30 more from characters 7–11, made odd so that the probe sequence never repeats a position within PROBES. */
function low(hash: string): number {
  return word(hash, 7) | 1
}

function word(hash: string, from: number): number {
  let value = 0
  for (let i = from; i < from + 5; i++) value = (value << 6) | VALUE[hash.charCodeAt(i) & 127]!
  return value
}
