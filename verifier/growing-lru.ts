import { LRUCache } from 'lru-cache'

const ONE_SLOT = () => 1

/** lru-cache's options but for its bound, which `growingLru` sets. */
export type GrowingLruOptions<K extends NonNullable<unknown>, V extends NonNullable<unknown>> = Omit<
  LRUCache.Options<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation' | 'maxEntrySize'
>

/**
 * An LRU cache of at most `entries` entries whose memory grows with what it holds. lru-cache's `max` preallocates
 * arrays of `max` slots when the cache is made; counting every entry as one against `maxSize` bounds it the same way,
 * its arrays grown as it fills (plus one of sizes).
 *
 * Why it matters: preallocated, the verifier's caches (1,000,000 keys by default, 100,000 more entities, 100,000
 * unknown keys and rate windows) would be large young arrays that all survive, and V8 takes that survival as its cue
 * to grow the young generation to its maximum (a 64 MB semi-space) within the first scavenges; it stays there while the
 * process is busy. Under load a scavenge then comes seldom and spends most of a long pause sweeping the request buffers
 * made since the last one, where a process with a small young generation pauses briefly and often: a long pause holds
 * up every request in flight, and shows in the p99.
 */
export function growingLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  entries: number,
  options: GrowingLruOptions<K, V> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: ONE_SLOT })
}
