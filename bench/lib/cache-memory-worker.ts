import { readFileSync } from 'node:fs'
import { randomBytes } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import { newId } from '../../shared/ids.js'
import { hashKey } from '../../shared/keys/key-material.js'
import type { KeyRecord } from '../../shared/keys/records.js'
import { KeyCache } from '../../verifier/key-cache.js'

/**
 * Heap bytes per cached key (run with --expose-gc): fills a cache with `keys` records shaped as the store
 * hands them to a verifier (parsed from the stored JSON, as on a miss), collects garbage, and divides the
 * heap growth by the count. The baseline is a plain lru-cache of small `{ id, enabled }` records under the
 * same hashes. Prints { keygate, plainLru } in bytes per key.
 */
const { keys } = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as { keys: number }
const gc = (globalThis as { gc?: () => void }).gc
if (!gc) throw new Error('run with --expose-gc')

function heapAfterGc(): number {
  gc!()
  gc!()
  return process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers
}

function storedRecord(i: number): { key: string; doc: string } {
  const key = `kg_${randomBytes(16).toString('base64url')}`
  const record = {
    id: newId('key'),
    hash: hashKey(key),
    apiId: 'api_3ZtWQ4dJ8Fq1xY',
    start: key.slice(0, 8),
    enabled: true,
    createdAt: 1_795_000_000_000 + i,
  }
  return { key, doc: JSON.stringify(record) }
}

/** Bytes per entry of what `fill` holds: the stored documents are made first and not counted. */
function perKey(fill: (docs: { key: string; doc: string }[]) => unknown): number {
  const docs = Array.from({ length: keys }, (_, i) => storedRecord(i))
  const before = heapAfterGc()
  const held = fill(docs)
  const after = heapAfterGc()
  if (held === undefined) throw new Error('nothing held')
  return (after - before) / keys
}

const keygate = perKey((docs) => {
  const cache = new KeyCache({ maxKeys: keys, maxUnknown: 1_000, unknownTtlMs: 10_000 })
  // The lookup's hash is a string of its own (hashed from the request's key), as in the verifier.
  for (const [i, { key, doc }] of docs.entries())
    cache.offer(hashKey(key), { ...(JSON.parse(doc) as Omit<KeyRecord, 'rev'>), rev: i + 1 })
  return cache
})
const plainLru = perKey((docs) => {
  const cache = new LRUCache<string, { id: string; enabled: boolean }>({ max: keys })
  for (const { key, doc } of docs) {
    const { id, enabled } = JSON.parse(doc) as { id: string; enabled: boolean }
    cache.set(hashKey(key), { id, enabled })
  }
  return cache
})
process.stdout.write(JSON.stringify({ keygate, plainLru }))
