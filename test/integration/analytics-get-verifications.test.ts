import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { VerdictCode } from '../../shared/verification/verification.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import type { AnalyticsEngine } from '../../control-plane/analytics/engine/analytics-engine.js'
import { ManualClock, openBackend, startTestControlPlane } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.UTC(2031, 4, 20, 15, 30)

/** A verification as the verifiers record it: a key, a time, an outcome and the tags the call carried. */
interface Verification {
  keyId: string
  time: number
  outcome: VerdictCode
  tags: string[]
}

const OUTCOMES: VerdictCode[] = ['VALID', 'VALID', 'VALID', 'RATE_LIMITED', 'USAGE_EXCEEDED', 'DISABLED', 'EXPIRED']
const TAGS = [[], ['path=/a'], ['path=/b'], ['path=/a', 'region=eu']]

/** Deterministic verifications spread over [start, end) across the keys (a linear congruential generator). */
function generate(keyIds: string[], start: number, end: number, count: number, seed = 1): Verification[] {
  let state = seed
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31
  return Array.from({ length: count }, () => ({
    keyId: keyIds[Math.floor(next() * keyIds.length)]!,
    time: start + Math.floor(next() * (end - start)),
    outcome: OUTCOMES[Math.floor(next() * OUTCOMES.length)]!,
    tags: TAGS[Math.floor(next() * TAGS.length)]!,
  }))
}

const sum = (rows: any[], field: string) => rows.reduce((total, row) => total + (row[field] ?? 0), 0)

/**
 * analytics.getVerifications on both stores, organised as Unkey's v1 tests of the operation: its scenarios (usage of
 * a user over a day, per key, monthly invoices, a quota gauge, the top users) over the analytics engine's rows. Rows
 * are inserted into the raw table as the ingest inserts the verifiers' (the rollups fed by its views); one test goes
 * through a real verifier.
 */
onBothStores('analytics.getVerifications', { clock: () => new ManualClock(NOW), analytics: true }, (stack) => {
  const newApi = async () => (await stack.post('apis.createApi', { name: 'analytics' })).body.apiId as string
  /** Each key made: its api and owner, which its verifications' rows carry. */
  const made = new Map<string, { apiId: string; externalId: string }>()
  const newKey = async (apiId: string, externalId?: string) => {
    const created = (await stack.post('keys.createKey', { apiId, ...(externalId ? { externalId } : {}) })).body as {
      keyId: string
      key: string
    }
    made.set(created.keyId, { apiId, externalId: externalId ?? '' })
    return created
  }
  let batches = 0
  const record = async (verifications: Verification[]) => {
    const rows = verifications.map((v, i) => ({
      request_id: `req_${batches}_${i}`,
      time: v.time,
      workspace_id: 'ws_keygate',
      key_space_id: made.get(v.keyId)!.apiId,
      identity_id: '',
      external_id: made.get(v.keyId)!.externalId,
      key_id: v.keyId,
      outcome: v.outcome,
      tags: v.tags,
      source: 'v1.verifyKey',
      region: 'test',
      spent_credits: v.outcome === 'VALID' ? 1 : 0,
      latency: 0.1,
    }))
    await stack.engine!.insert('key_verifications_v1', rows, `test-${stack.store}-${++batches}`)
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
  /** The counts of an answer's row, as Unkey's v1 names every outcome. */
  const expected = (verifications: Verification[]) => {
    const count = (outcome: VerdictCode) => verifications.filter((v) => v.outcome === outcome).length
    return {
      valid: count('VALID'),
      notFound: count('NOT_FOUND'),
      forbidden: count('FORBIDDEN'),
      usageExceeded: count('USAGE_EXCEEDED'),
      rateLimited: count('RATE_LIMITED'),
      unauthorized: 0,
      disabled: count('DISABLED'),
      insufficientPermissions: count('INSUFFICIENT_PERMISSIONS'),
      expired: count('EXPIRED'),
      total: verifications.length,
    }
  }
  const totals = (rows: any[]) =>
    Object.fromEntries(Object.keys(expected([])).map((field) => [field, sum(rows, field)]))
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
      expect(body[0]).toEqual({ time: Math.floor((NOW - 30 * HOUR) / HOUR) * HOUR, ...expected([]) })
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
      expect((await query({ apiId, keyId: other, start: NOW - 3 * DAY })).body).toEqual([expected([])])
    })

    it('filters by tags (every one named) and groups by each tag or by the list of tags', async () => {
      const apiId = await newApi()
      const keyIds = [(await newKey(apiId)).keyId, (await newKey(apiId)).keyId]
      const verifications = generate(keyIds, NOW - 2 * DAY, NOW, 1_000, 17)
      await record(verifications)
      const tagged = (tags: string[]) => verifications.filter((v) => tags.every((tag) => v.tags.includes(tag)))
      const one = await query({ apiId, tag: 'path=/a', start: NOW - 3 * DAY })
      expect(one.body).toEqual([expected(tagged(['path=/a']))])
      const both = await query({ apiId, tag: ['path=/a', 'region=eu'], start: NOW - 3 * DAY })
      expect(both.body).toEqual([expected(tagged(['path=/a', 'region=eu']))])
      const byTag = await query({ apiId, groupBy: 'tag', start: NOW - 3 * DAY })
      expect(byTag.status, JSON.stringify(byTag.body)).toBe(200)
      for (const tag of ['path=/a', 'path=/b', 'region=eu'])
        expect(byTag.body.find((row: any) => row.tag === tag)).toEqual({ tag, ...expected(tagged([tag])) })
      const byTags = await query({ apiId, groupBy: 'tags', start: NOW - 3 * DAY })
      for (const tags of TAGS)
        expect(byTags.body.find((row: any) => JSON.stringify(row.tags) === JSON.stringify(tags))).toEqual({
          tags,
          ...expected(verifications.filter((v) => JSON.stringify(v.tags) === JSON.stringify(tags))),
        })
    })

    it("a sum from further back than the hourly rollup keeps (90 days) is read by the day, from start's UTC day", async () => {
      const apiId = await newApi()
      const { keyId } = await newKey(apiId)
      const at = (time: number): Verification => ({ keyId, time, outcome: 'VALID', tags: [] })
      const start = NOW - 100 * DAY
      const day = Math.floor(start / DAY) * DAY
      // The day before start's: not counted; start's day before its hour, and after: counted by the day.
      await record([at(day - HOUR), at(day + HOUR), at(start + HOUR)])
      expect((await query({ apiId, start, end: NOW })).body).toEqual([{ ...expected([]), valid: 2, total: 2 }])
      // Within the 90 days, by the hour: from start's hour.
      const recent = NOW - 10 * DAY
      const recentDay = Math.floor(recent / DAY) * DAY
      await record([at(recentDay + HOUR), at(recent + HOUR)])
      expect((await query({ apiId, start: recent, end: NOW })).body).toEqual([{ ...expected([]), valid: 1, total: 1 }])
    })

    it('filters by an externalId and a tag as they are: quotes, backslashes, tabs and newlines', async () => {
      const apiId = await newApi()
      const { keyId } = await newKey(apiId)
      const { keyId: plain } = await newKey(apiId)
      const externalId = `o'ne\\"two\t\\'three\n`
      made.set(keyId, { apiId, externalId })
      made.set(plain, { apiId, externalId: `o'ne\\` })
      const tag = `path='/a\\b'\t"x"\\`
      const at = (key: string, tags: string[]): Verification => ({
        keyId: key,
        time: NOW - HOUR,
        outcome: 'VALID',
        tags,
      })
      await record([at(keyId, [tag]), at(keyId, []), at(plain, [tag]), at(plain, ['path=/a'])])
      const counted = async (params: Record<string, string>) =>
        (await query({ apiId, start: NOW - DAY, ...params })).body[0]?.total
      expect(await counted({ externalId })).toBe(2)
      expect(await counted({ tag })).toBe(2)
      expect(await counted({ externalId, tag })).toBe(1)
      const byIdentity = await query({ apiId, start: NOW - DAY, groupBy: 'identity' })
      expect(byIdentity.body.map((row: any) => [row.identity.externalId, row.total]).sort()).toEqual(
        [
          [externalId, 2],
          [`o'ne\\`, 2],
        ].sort(),
      )
    })

    it("keeps a deleted key's verifications", async () => {
      const apiId = await newApi()
      const { keyId } = await newKey(apiId)
      const verifications = generate([keyId], NOW - DAY, NOW, 100, 19)
      await record(verifications)
      expect((await stack.post('keys.deleteKey', { keyId })).status).toBe(200)
      expect((await query({ apiId, keyId, start: NOW - 2 * DAY })).body).toEqual([expected(verifications)])
    })

    it('counts what the verifiers counted, through a real verifier', async () => {
      const apiId = await newApi()
      const { key } = await stack.post('keys.createKey', { apiId, remaining: 2 }).then((r) => r.body)
      for (let i = 0; i < 3; i++) await stack.verify({ key })
      await stack.verify({ key: 'kg_not_a_key_of_any_api' })
      await stack.ingestAnalytics()
      const { body } = await query({ apiId, start: NOW - HOUR, end: NOW })
      expect(body).toEqual([{ ...expected([]), valid: 2, usageExceeded: 1, total: 3 }])
    })

    it("per key: a row per key verified, none for the api's unknown keys (they have no key)", async () => {
      const apiId = await newApi()
      const { key, keyId } = await stack.post('keys.createKey', { apiId }).then((r) => r.body)
      await stack.verify({ key, apiId })
      await stack.verify({ key: 'kg_not_a_key_of_any_api', apiId })
      await stack.ingestAnalytics()
      const summed = await query({ apiId, start: NOW - HOUR, end: NOW })
      expect(summed.body).toEqual([{ ...expected([]), valid: 1, notFound: 1, total: 2 }])
      const perKey = await query({ apiId, start: NOW - HOUR, end: NOW, groupBy: 'key' })
      expect(perKey.body).toEqual([{ keyId, ...expected([]), valid: 1, total: 1 }])
    })
  })

  describe('errors', () => {
    it.each([
      ['start after end', { start: NOW, end: NOW - HOUR }, 'start'],
      ['start equal to end', { start: NOW, end: NOW }, 'start'],
      ['no start', {}, 'start'],
      ['an empty tag', { start: NOW - HOUR, tag: '' }, 'tag'],
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

    it('an engine that fails on the report (not a limit): 503, saying nothing of the statement', async () => {
      const backend = await openBackend()
      const engine = stack.engine!
      // The engine as it answers once its session is gone: the report is Keygate's statement, not the caller's.
      const failing: AnalyticsEngine = {
        kind: engine.kind,
        database: engine.database,
        command: (sql) => engine.command(sql),
        insert: (table, rows, batchId) => engine.insert(table, rows, batchId),
        query: async (sql) => {
          throw new Error(`Code: 1001. DB::Exception: std::exception. (STD_EXCEPTION) while running ${sql}`)
        },
        close: async () => undefined,
      }
      const broken = await startTestControlPlane({
        backend,
        clock: stack.clock,
        analytics: { engine: failing, holder: 'broken' },
      })
      try {
        const { apiId } = (await stack.post('apis.createApi', { name: 'broken' }, broken)).body
        const { keyId } = (await stack.post('keys.createKey', { apiId }, broken)).body
        for (const url of [
          `/v1/analytics.getVerifications?apiId=${apiId}&start=${NOW - HOUR}`,
          `/v1/keys.getVerifications?keyId=${keyId}`,
        ]) {
          const response = await broken.app.inject({ url, headers: ADMIN_HEADERS })
          expect({ url, status: response.statusCode, code: response.json().error.code }).toEqual({
            url,
            status: 503,
            code: 'UNAVAILABLE',
          })
          expect(response.body).not.toMatch(/SELECT|key_space_id|DB::Exception/)
        }
      } finally {
        await broken.close()
        await backend.close()
      }
    })

    it('a control plane that serves no analytics: 412 saying so', async () => {
      const bare = await startTestControlPlane({ backend: stack.backend, clock: stack.clock })
      try {
        const apiId = await newApi()
        const response = await bare.app.inject({
          url: `/v1/analytics.getVerifications?apiId=${apiId}&start=${NOW - HOUR}`,
          headers: ADMIN_HEADERS,
        })
        expect({ status: response.statusCode, code: response.json().error.code }).toEqual({
          status: 412,
          code: 'PRECONDITION_FAILED',
        })
      } finally {
        await bare.close()
      }
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
