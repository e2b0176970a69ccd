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
 * its arrays grown as it fills (plus one of sizes: ~26 B a cached key in all, bench:memory).
 *
 * Why it matters: the verifier's caches (1,000,000 keys by default, 100,000 more entities, 100,000 unknown keys and
 * rate windows) were made as large young arrays that all survived, and V8 took that survival as its cue to grow the
 * young generation to its maximum (a 64 MB semi-space) within the first scavenges; it stays there while the process is
 * busy.
 * At 10,000 req/s a scavenge then came every ~690 ms and spent most of its 1.2–1.5 ms pause sweeping the request
 * buffers of those 690 ms, where a process with a small young generation pauses 0.2–0.4 ms every 64 ms: measured on the
 * p99 at that rate, and with caches that grow the verifier's was lower in each of six rounds (bench/RESULTS.md,
 * 2026-11-25).
 */
export function growingLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  entries: number,
  options: GrowingLruOptions<K, V> = {},
): LRUCache<K, V> {
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: ONE_SLOT })
}
