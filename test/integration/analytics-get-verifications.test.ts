import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { Outcome } from '../../shared/analytics.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.UTC(2031, 4, 20, 15, 30)

/** A verification as the verifiers count it: a key, an hour and an outcome. */
interface Verification {
  keyId: string
  time: number
  outcome: Outcome
}

/** Deterministic verifications spread over [start, end) across the keys (a linear congruential generator). */
function generate(keyIds: string[], start: number, end: number, count: number, seed = 1): Verification[] {
  let state = seed
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  const outcomes: Outcome[] = ['success', 'success', 'success', 'rateLimited', 'usageExceeded']
  return Array.from({ length: count }, () => ({
    keyId: keyIds[Math.floor(next() * keyIds.length)]!,
    time: start + Math.floor(next() * (end - start)),
    outcome: outcomes[Math.floor(next() * outcomes.length)]!,
  }))
}

const sum = (rows: any[], field: string) => rows.reduce((total, row) => total + (row[field] ?? 0), 0)

/**
 * analytics.getVerifications on both stores, organised as Unkey's v1 tests of the operation: its scenarios (usage of
 * a user over a day, per key, monthly invoices, a quota gauge, the top users) over counts Keygate keeps per key and
 * hour/day. Counts are added as the verifiers add them (store.addUsage, hour and day buckets); one test goes through
 * a real verifier.
 */
onBothStores('analytics.getVerifications', { clock: () => new ManualClock(NOW) }, (stack) => {
  const newApi = async () => (await stack.post('apis.createApi', { name: 'analytics' })).body.apiId as string
  const newKey = async (apiId: string, externalId?: string) =>
    (await stack.post('keys.createKey', { apiId, ...(externalId ? { externalId } : {}) })).body as {
      keyId: string
      key: string
    }
  const record = async (verifications: Verification[]) => {
    const counts = new Map<
      string,
      { keyId: string; granularity: 'hour' | 'day'; time: number; n: Record<string, number> }
    >()
    for (const v of verifications) {
      for (const granularity of ['hour', 'day'] as const) {
        const time = Math.floor(v.time / (granularity === 'hour' ? HOUR : DAY)) * (granularity === 'hour' ? HOUR : DAY)
        const id = `${v.keyId} ${granularity} ${time}`
        const entry = counts.get(id) ?? { keyId: v.keyId, granularity, time, n: {} }
        entry.n[v.outcome] = (entry.n[v.outcome] ?? 0) + 1
        counts.set(id, entry)
      }
    }
    await stack.backend.store.usage.addUsage(
      [...counts.values()].map(({ keyId, granularity, time, n }) => ({ keyId, granularity, time, counts: n })),
    )
  }
  const query = async (params: Record<string, string | number | string[]>, auth = ADMIN_HEADERS) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params))
      for (const one of [value].flat()) search.append(name, String(one))
    const response = await stack.controlPlane.app.inject({
      url: `/v1/analytics.getVerifications?${search.toString()}`,
      headers: auth,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const expected = (verifications: Verification[]) => ({
    valid: verifications.filter((v) => v.outcome === 'success').length,
    rateLimited: verifications.filter((v) => v.outcome === 'rateLimited').length,
    usageExceeded: verifications.filter((v) => v.outcome === 'usageExceeded').length,
    total: verifications.length,
  })
  const totals = (rows: any[]) => ({
    valid: sum(rows, 'valid'),
    rateLimited: sum(rows, 'rateLimited'),
    usageExceeded: sum(rows, 'usageExceeded'),
    total: sum(rows, 'total'),
  })
  const rootKey = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { authorization: `Bearer ${key}` }
  }

  describe('happy', () => {
    it('with no counts: one zero row per hour of the range', async () => {
      const apiId = await newApi()
      await newKey(apiId)
      const { status, body } = await query({ apiId, start: NOW - 30 * HOUR, end: NOW, groupBy: 'hour' })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body).toHaveLength(30)
      expect(body[0]).toEqual({
        time: Math.floor((NOW - 30 * HOUR) / HOUR) * HOUR,
        valid: 0,
        rateLimited: 0,
        usageExceeded: 0,
        total: 0,
      })
    })

    it.each([
      ['hour', { start: 5, end: 3 }, { start: 6, end: 0 }],
      ['day', { start: 5, end: 3 }, { start: 9, end: 0 }],
      ['month', { start: 25, end: 5 }, { start: 28, end: 0 }],
    ])('per %s: every verification in the range is counted', async (groupBy, made, asked) => {
      const apiId = await newApi()
      const keyIds = [(await newKey(apiId)).keyId, (await newKey(apiId)).keyId, (await newKey(apiId)).keyId]
      const verifications = generate(keyIds, NOW - made.start * DAY, NOW - made.end * DAY, 2_000)
      await record(verifications)
      const { status, body } = await query({
        apiId,
        start: NOW - asked.start * DAY,
        end: NOW - asked.end * DAY,
        groupBy,
      })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(totals(body)).toEqual(expected(verifications))
      for (const row of body) expect(row).not.toHaveProperty('keyId')
    })

    it("a user's usage over the past 24 hours, two keys: by hour, their keys only", async () => {
      const apiId = await newApi()
      const externalId = `user_${randomUUID()}`
      const mine = [(await newKey(apiId, externalId)).keyId, (await newKey(apiId, externalId)).keyId]
      const noise = (await newKey(apiId)).keyId
      const verifications = generate([...mine, noise], NOW - 12 * HOUR, NOW, 3_000)
      await record(verifications)
      const { status, body } = await query({ apiId, externalId, start: NOW - DAY, end: NOW, groupBy: 'hour' })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.length).toBeGreaterThanOrEqual(24)
      expect(body.length).toBeLessThanOrEqual(25)
      expect(totals(body)).toEqual(expected(verifications.filter((v) => mine.includes(v.keyId))))
    })

    it("a user's usage per key and hour: every row names its key, each key's counts are its own", async () => {
      const apiId = await newApi()
      const externalId = `user_${randomUUID()}`
      const mine = [(await newKey(apiId, externalId)).keyId, (await newKey(apiId, externalId)).keyId]
      const noise = (await newKey(apiId)).keyId
      const verifications = generate([...mine, noise], NOW - 12 * HOUR, NOW, 3_000, 7)
      await record(verifications)
      const { body } = await query({ apiId, externalId, start: NOW - DAY, end: NOW, groupBy: ['key', 'hour'] })
      for (const row of body) expect(mine).toContain(row.keyId)
      for (const keyId of mine)
        expect(totals(body.filter((row: any) => row.keyId === keyId))).toEqual(
          expected(verifications.filter((v) => v.keyId === keyId)),
        )
    })

    it('monthly invoices per user: by month since the first of last month', async () => {
      const apiId = await newApi()
      const externalId = `user_${randomUUID()}`
      const mine = [(await newKey(apiId, externalId)).keyId, (await newKey(apiId, externalId)).keyId]
      const noise = (await newKey(apiId)).keyId
      const verifications = generate([...mine, noise], NOW - 80 * DAY, NOW, 4_000, 3)
      await record(verifications)
      const start = Date.UTC(2031, 3, 1)
      const { body } = await query({ apiId, externalId, start, end: NOW, groupBy: 'month' })
      expect(body.map((row: any) => row.time)).toEqual([Date.UTC(2031, 3, 1), Date.UTC(2031, 4, 1)])
      expect(totals(body)).toEqual(expected(verifications.filter((v) => mine.includes(v.keyId) && v.time >= start)))
    })

    it("a quota gauge: a user's verifications this billing period, by day", async () => {
      const apiId = await newApi()
      const externalId = `user_${randomUUID()}`
      const mine = [(await newKey(apiId, externalId)).keyId]
      const verifications = generate(mine, NOW - 60 * DAY, NOW, 3_000, 5)
      await record(verifications)
      const start = Date.UTC(2031, 4, 2)
      const { body } = await query({ apiId, externalId, start, end: Date.UTC(2031, 5, 2), groupBy: 'day' })
      expect(totals(body)).toEqual(expected(verifications.filter((v) => v.time >= start)))
    })

    it('the top 10 users by verifications over 30 days: by identity, ordered by total, descending', async () => {
      const apiId = await newApi()
      const owners = Array.from({ length: 15 }, (_, i) => `user_${i}_${randomUUID()}`)
      const keyOwner = new Map<string, string>()
      for (const owner of owners) for (let i = 0; i < 2; i++) keyOwner.set((await newKey(apiId, owner)).keyId, owner)
      await newKey(apiId) // no owner: not an identity
      const verifications = generate([...keyOwner.keys()], NOW - 60 * DAY, NOW, 6_000, 11)
      await record(verifications)
      const start = NOW - 30 * DAY
      const byOwner = new Map<string, number>()
      for (const v of verifications) {
        if (Math.floor(v.time / HOUR) * HOUR < Math.floor(start / HOUR) * HOUR) continue
        const owner = keyOwner.get(v.keyId)!
        byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1)
      }
      const top = [...byOwner.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10)
      const { status, body } = await query({
        apiId,
        start,
        end: NOW,
        groupBy: 'identity',
        orderBy: 'total',
        order: 'desc',
        limit: 10,
      })
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.map((row: any) => row.total)).toEqual(top.map(([, total]) => total))
      for (const row of body) expect(row.total).toBe(byOwner.get(row.identity.externalId))
    })

    it('counts only the keys named by keyId (one or several), summed', async () => {
      const apiId = await newApi()
      const keyIds = [(await newKey(apiId)).keyId, (await newKey(apiId)).keyId, (await newKey(apiId)).keyId]
      const verifications = generate(keyIds, NOW - 2 * DAY, NOW, 1_000, 13)
      await record(verifications)
      const one = await query({ apiId, keyId: keyIds[0]!, start: NOW - 3 * DAY })
      expect(one.body).toEqual([expected(verifications.filter((v) => v.keyId === keyIds[0]))])
      const two = await query({ apiId, keyId: keyIds.slice(0, 2), start: NOW - 3 * DAY })
      expect(two.body).toEqual([expected(verifications.filter((v) => v.keyId !== keyIds[2]))])
      // A key of another api counts nothing here.
      const other = (await newKey(await newApi())).keyId
      await record(generate([other], NOW - DAY, NOW, 10))
      expect((await query({ apiId, keyId: other, start: NOW - 3 * DAY })).body).toEqual([
        { valid: 0, rateLimited: 0, usageExceeded: 0, total: 0 },
      ])
    })

    it('counts what the verifiers counted, through a real verifier', async () => {
      const apiId = await newApi()
      const { key } = await stack.post('keys.createKey', { apiId, remaining: 2 }).then((r) => r.body)
      for (let i = 0; i < 3; i++) await stack.verify({ key })
      await stack.verifier.verifier.flushUsage()
      const { body } = await query({ apiId, start: NOW - HOUR, end: NOW })
      expect(body).toEqual([{ valid: 2, rateLimited: 0, usageExceeded: 1, total: 3 }])
    })
  })

  describe('errors', () => {
    it.each([
      ['start after end', { start: NOW, end: NOW - HOUR }, 'start'],
      ['start equal to end', { start: NOW, end: NOW }, 'start'],
      ['no start', {}, 'start'],
      ['a tag filter (Keygate keeps no tags)', { start: NOW - HOUR, tag: 'a' }, 'tag'],
      ['grouping by tags', { start: NOW - HOUR, groupBy: 'tags' }, 'tag'],
      ['an unknown grouping', { start: NOW - HOUR, groupBy: 'week' }, 'groupBy'],
      ['a limit of 0', { start: NOW - HOUR, limit: 0 }, 'limit'],
      ['more than 1000 hours', { start: NOW - 1_001 * HOUR, groupBy: 'hour' }, 'at most 1000 hours'],
    ])('%s: 400 naming it', async (_what, params, named) => {
      const apiId = await newApi()
      const { status, body } = await query({ apiId, ...params })
      expect({ status, code: body.error?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' })
      expect(body.error.message).toContain(named)
    })

    it('an api that does not exist: 404', async () => {
      const apiId = newId('api')
      const { status, body } = await query({ apiId, start: NOW - HOUR })
      expect({ status, message: body.error.message }).toEqual({ status: 404, message: `api ${apiId} not found` })
    })

    it('an api with more than 1000 keys, unfiltered: 412 asking for keyId, not a partial sum', async () => {
      const apiId = await newApi()
      await Promise.all(
        Array.from({ length: 1_001 }, (_, i) =>
          stack.backend.store.keys.createKey({
            id: newId('key'),
            hash: `${String(i).padStart(43, 'h')}=`,
            start: '',
            apiId,
            enabled: true,
            createdAt: NOW,
          }),
        ),
      )
      const { status, body } = await query({ apiId, start: NOW - HOUR })
      expect({ status, code: body.error.code }).toEqual({ status: 412, code: 'PRECONDITION_FAILED' })
      expect(body.error.message).toContain('keyId')
    })
  })

  describe('security', () => {
    it.each([
      ['no Authorization', {}],
      ['a wrong root key', { authorization: `Bearer ${generateRootKey().key}` }],
    ])('%s: UNAUTHORIZED', async (_who, auth) => {
      const { status, body } = await query({ apiId: await newApi(), start: NOW - HOUR }, auth)
      expect({ status, code: body.error.code }).toEqual({ status: 403, code: 'UNAUTHORIZED' })
    })

    it.each([
      ['no permissions', () => []],
      ['unrelated permissions', () => [randomUUID()]],
      [
        'every key action on the api',
        (apiId: string) => ['create_key', 'read_key', 'update_key', 'delete_key'].map((a) => `api.${apiId}.${a}`),
      ],
      [
        'read_api and read_analytics on another api',
        () => [`api.${newId('api')}.read_api`, `api.${newId('api')}.read_analytics`],
      ],
    ])('%s: 403 INSUFFICIENT_PERMISSIONS', async (_who, permissions) => {
      const apiId = await newApi()
      const { status, body } = await query({ apiId, start: NOW - HOUR }, await rootKey(permissions(apiId)))
      expect({ status, code: body.error.code }).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS' })
    })

    it.each([
      ['*', () => ['*']],
      ["api.*.read_api (Unkey's)", () => ['api.*.read_api']],
      ['read_api on the api', (apiId: string) => [`api.${apiId}.read_api`]],
      ["api.*.read_analytics (Keygate's)", () => ['api.*.read_analytics']],
      ['read_analytics on the api, and more', (apiId: string) => [`api.${apiId}.read_analytics`, randomUUID()]],
    ])('a root key with %s: 200', async (_who, permissions) => {
      const apiId = await newApi()
      const { status, body } = await query({ apiId, start: NOW - HOUR }, await rootKey(permissions(apiId)))
      expect(status, JSON.stringify(body)).toBe(200)
    })
  })
})
