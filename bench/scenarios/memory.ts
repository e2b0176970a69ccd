import { CHANGE_LOG_MAX_LEN } from '../../shared/change-event.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { SHARD_COUNT as SHARDS } from '../../shared/shards.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { startKeygateFixture } from '../lib/keygate-fixture.js'
import { runPinnedWorker } from '../lib/load.js'
import type { ScenarioReport } from '../lib/scenario-report.js'
import { progress } from '../lib/rounds.js'

const REDIS_KEYS = Number(process.env.BENCH_REDIS_KEYS ?? 20_000)
const SAMPLE = 500

/**
 * 6. Memory. Verifier heap per cached key at 100k and 1M keys (bench/lib/cache-memory-worker.ts, with a plain
 * lru-cache of small records as the baseline in the same process), and Redis bytes per key from MEMORY USAGE,
 * then a paper estimate for 10M and 100M keys.
 */
export async function memory(): Promise<ScenarioReport> {
  const heap: Record<string, { keygate: number; plainLru: number }> = {}
  for (const keys of [100_000, 1_000_000]) {
    progress(`verifier heap per key at ${keys.toLocaleString('en-US')} keys`)
    heap[keys] = await runPinnedWorker('cache-memory-worker', { keys }, ['--expose-gc', '--max-old-space-size=4096'])
  }

  const fixture = await startKeygateFixture()
  try {
    progress(`creating ${REDIS_KEYS.toLocaleString('en-US')} keys in Redis`)
    const apiId = await fixture.createApi('bench')
    const usedBefore = Number(/used_memory:(\d+)/.exec(await fixture.redis.admin.info('memory'))![1])
    const keys = await fixture.createKeys(apiId, REDIS_KEYS, 64)
    const usedAfter = Number(/used_memory:(\d+)/.exec(await fixture.redis.admin.info('memory'))![1])
    const usage = async (key: string) => Number(await fixture.redis.admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'))
    const sample = keys.slice(0, SAMPLE)
    let record = 0
    let pointer = 0
    for (const { key, keyId } of sample) {
      record += await usage(redisKeys.record(hashKey(key)))
      pointer += await usage(redisKeys.keyIdIndex(keyId))
    }
    record /= SAMPLE
    pointer /= SAMPLE
    const index = (await usage(redisKeys.apiKeys(apiId))) / REDIS_KEYS
    let log = 0
    let logEntries = 0
    for (let shard = 0; shard < SHARDS; shard++) {
      log += await usage(redisKeys.changeLog(shard))
      logEntries += await fixture.redis.admin.xlen(redisKeys.changeLog(shard))
    }
    const perLogEntry = log / logEntries
    const perKey = record + pointer + index
    const logCap = perLogEntry * CHANGE_LOG_MAX_LEN * SHARDS
    const usedPerKey = (usedAfter - usedBefore) / REDIS_KEYS
    // What the keyspace really costs per key (dict entries, allocator rounding): the growth less the two capped
    // streams (change logs, audit log). MEMORY USAGE of single keys leaves those overheads out.
    const audit = await usage(redisKeys.auditLog)
    const usedPerKeyLessStreams = (usedAfter - usedBefore - log - audit) / REDIS_KEYS
    const estimatePerKey = Math.max(perKey, usedPerKeyLessStreams)

    const heapPerKey = heap[1_000_000]!.keygate
    const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`
    const estimate = (n: number) => [n.toLocaleString('en-US'), gb(heapPerKey * n), gb(estimatePerKey * n + logCap)]
    return {
      name: 'memory',
      title: '6. Memory per key',
      command: 'npm run bench:memory',
      method: `Verifier: a KeyCache filled with records as the store hands them over (parsed from their stored JSON), garbage collected, heap growth ÷ keys; the baseline is a plain lru-cache of \`{ id, enabled }\` under the same hashes, in the same process. Redis: ${REDIS_KEYS.toLocaleString('en-US')} keys created through the control plane in one api; MEMORY USAGE of ${SAMPLE} records and id pointers, of the api's index, and of the ${SHARDS} change logs.`,
      table: {
        headers: ['what', 'bytes per key'],
        rows: [
          ['verifier heap, keygate cache, 100k keys', heap[100_000]!.keygate.toFixed(0)],
          ['verifier heap, keygate cache, 1M keys', heap[1_000_000]!.keygate.toFixed(0)],
          ['verifier heap, plain lru-cache of small records, 1M keys', heap[1_000_000]!.plainLru.toFixed(0)],
          ['Redis: key record (hash: rev, doc)', record.toFixed(0)],
          ['Redis: key id → record pointer', pointer.toFixed(0)],
          ["Redis: share of the api's key index (zset)", index.toFixed(0)],
          ['Redis: per key, steady state (sum of the three)', perKey.toFixed(0)],
          [
            `Redis: per change-log entry (capped at ${CHANGE_LOG_MAX_LEN.toLocaleString('en-US')} per shard × ${SHARDS} = ${gb(logCap)} at most)`,
            perLogEntry.toFixed(0),
          ],
          ['Redis: used_memory growth ÷ keys created (includes their log and audit entries)', usedPerKey.toFixed(0)],
          [
            'Redis: the same, less the change-log and audit streams (keyspace overheads included): used for the estimate',
            usedPerKeyLessStreams.toFixed(0),
          ],
        ],
      },
      checks: [
        {
          what: 'verifier heap bytes per cached key at 1M keys',
          value: heapPerKey,
          target: '≤ 300',
          pass: heapPerKey <= 300,
        },
        {
          what: 'verifier heap bytes per cached key at 100k keys',
          value: heap[100_000]!.keygate,
          target: '≤ 300',
          pass: heap[100_000]!.keygate <= 300,
        },
      ],
      chart: [],
      markdown: [
        "Paper estimate (verifier: every key cached, heap only; Redis: per key from used_memory less the streams (or from MEMORY USAGE, whichever is larger) × keys + the change logs at their cap; the audit log is capped separately; add Redis' own overhead and AOF rewrite headroom):",
        '',
        '| keys | verifier heap | Redis memory |',
        '|---|---|---|',
        `| ${estimate(10_000_000).join(' | ')} |`,
        `| ${estimate(100_000_000).join(' | ')} |`,
      ],
      notes: [
        'A verifier need not cache every key: CACHE_MAX_KEYS bounds it (default 1,000,000 ≈ ' +
          `${((heapPerKey * 1e6) / 2 ** 20).toFixed(0)} MB), and a key outside it costs one Redis read. Keys with names, meta, permissions or limits cost more, by the size of those values; and the keys here all belong to one api, whose id the cache stores once (the best case).`,
      ],
      summary: `memory: verifier ${heapPerKey.toFixed(0)} B/key at 1M (plain lru-cache ${heap[1_000_000]!.plainLru.toFixed(0)}), Redis ${estimatePerKey.toFixed(0)} B/key + ${gb(logCap)} change-log cap; 100M keys ≈ ${gb(estimatePerKey * 1e8 + logCap)} Redis`,
    }
  } finally {
    await fixture.stop()
  }
}
