import { afterEach, describe, expect, it } from 'vitest'
import { LOG_TRIMMED } from '../../shared/store/change-log/change-log-store.js'
import { redisKeys } from '../../shared/store/redis/redis-keys.js'
import { openBackend, type Backend } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { newApi, newKey } from './contract-records.js'

/**
 * Credit notices as the webhooks' deriver reads them without polling every shard: each notice logged is published as
 * a hint on the change feed (on both stores), and on Redis a shard's notices are read with one command, which still
 * tells a trim that passed the reader.
 */
const redis = useRedisServer()

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`credit notice hints on the ${storeKind} store`, () => {
    let backend: Backend | undefined
    afterEach(async () => {
      await backend?.close()
    })

    it('publishes a hint with the shard when a spend or an update logs a notice, none when it logs none', async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      const { store, feed } = backend
      const hinted: number[] = []
      const events: number[] = []
      await feed.subscribe({
        onEvent: (event) => events.push(event.shard),
        onSubscribed: () => {},
        onDisconnected: () => {},
        onCreditNotice: (shard) => hinted.push(shard),
      })
      const api = await newApi(store)
      const created = await store.keys.createKey(newKey(api.id, { remaining: 5 }))
      if (!created) throw new Error('create failed')
      const { id: keyId, hash } = created.record
      const notice = { keyId, apiId: api.id, lowThreshold: 3 }
      await waitFor(() => events.includes(created.event.shard), 'the create published')
      await store.keys.spendCredits(hash, 1, undefined, Date.now(), notice) // 5 → 4: no notice
      await store.keys.spendCredits(hash, 2, undefined, Date.now(), notice) // 4 → 2: low
      await waitFor(() => hinted.length === 1, 'the hint of the low notice')
      await store.keys.updateCredits(keyId, 'set', 0, undefined, Date.now(), notice) // 2 → 0: exhausted
      await waitFor(() => hinted.length === 2, 'the hint of the exhausted notice')
      expect(hinted).toEqual([created.event.shard, created.event.shard])
    })
  })
}

describe('credit notices read on Redis', () => {
  let backend: Backend | undefined
  afterEach(async () => {
    await backend?.close()
  })

  it("reads a shard's notices with one command, and says trimmed once a trim passed the reader", async () => {
    backend = await openBackend(redis.url)
    const { store } = backend
    const shard = 5
    const log = redisKeys.creditNotices(shard)
    await redis.admin.del(log)
    const ids: string[] = []
    for (const remaining of ['2', '1', '0'])
      ids.push((await redis.admin.xadd(log, '*', 'kind', 'low', 'keyId', 'k', 'apiId', 'a', 'remaining', remaining))!)
    const xranges = async () =>
      Number(/cmdstat_xrange:calls=(\d+)/.exec(await redis.admin.info('commandstats'))?.[1] ?? 0)
    const before = await xranges()
    const after = await store.changes.readCreditNotices(shard, ids[0]!, 10)
    expect(await xranges()).toBe(before + 1)
    expect(after === LOG_TRIMMED ? after : after.map((notice) => notice.id)).toEqual(ids.slice(1))
    expect(await store.changes.readCreditNotices(shard, ids[2]!, 10)).toEqual([])
    const all = await store.changes.readCreditNotices(shard, '', 2)
    expect(all === LOG_TRIMMED ? all : all.map((notice) => notice.id)).toEqual(ids.slice(0, 2))
    // The first two trimmed: a reader that stopped at the first missed the second.
    await redis.admin.xtrim(log, 'MAXLEN', 1)
    expect(await store.changes.readCreditNotices(shard, ids[0]!, 10)).toBe(LOG_TRIMMED)
    expect(await store.changes.readCreditNotices(shard, ids[2]!, 10)).toEqual([])
    // Nothing logged since the reader's last (the log emptied): nothing to read, no gap to tell.
    await redis.admin.del(log)
    expect(await store.changes.readCreditNotices(shard, ids[2]!, 10)).toEqual([])
  })
})
