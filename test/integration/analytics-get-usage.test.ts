import { randomUUID } from 'node:crypto'
import { expect, it } from 'vitest'
import type { VerdictCode } from '../../shared/verification/verification.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const NOW = Date.UTC(2031, 4, 20, 15, 30)
const MAY_18 = Date.UTC(2031, 4, 18)

interface Verification {
  keyId: string
  time: number
  outcome: VerdictCode
  credits?: number
}

/**
 * analytics.getUsage on both stores: usage summaries for billing over the analytics engine's rollups (rows inserted
 * into the raw table as the ingest inserts the verifiers', the rollups fed by its views).
 */
onBothStores('analytics.getUsage', { clock: () => new ManualClock(NOW), analytics: true }, (stack) => {
  // Both stacks share the file's engine: each run's identities are its own.
  const acme = `acme-${randomUUID()}`
  const globex = `globex-${randomUUID()}`
  const initech = `initech-${randomUUID()}`
  const made = new Map<string, { apiId: string; externalId: string }>()
  const newApi = async () => (await stack.post('apis.createApi', { name: 'usage' })).body.apiId as string
  const newKey = async (apiId: string, externalId?: string) => {
    const { keyId } = (await stack.post('keys.createKey', { apiId, ...(externalId ? { externalId } : {}) })).body as {
      keyId: string
    }
    made.set(keyId, { apiId, externalId: externalId ?? '' })
    return keyId
  }
  let batches = 0
  const record = async (verifications: Verification[]) => {
    const rows = verifications.map((v, i) => ({
      request_id: `usage_${batches}_${i}`,
      time: v.time,
      workspace_id: 'ws_keygate',
      key_space_id: made.get(v.keyId)!.apiId,
      identity_id: '',
      external_id: made.get(v.keyId)!.externalId,
      key_id: v.keyId,
      outcome: v.outcome,
      tags: [],
      source: 'v1.verifyKey',
      region: 'test',
      spent_credits: v.credits ?? 0,
      latency: 0.1,
    }))
    await stack.engine!.insert('key_verifications_v1', rows, `usage-${stack.store}-${++batches}`)
  }
  const v1 = async (params: Record<string, string | number | string[]>, auth = ADMIN_HEADERS) => {
    const search = new URLSearchParams()
    for (const [name, value] of Object.entries(params))
      for (const one of [value].flat()) search.append(name, String(one))
    const response = await stack.controlPlane.app.inject({
      url: `/v1/analytics.getUsage?${search.toString()}`,
      headers: auth,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const v2 = async (body: unknown, auth = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({
      method: 'POST',
      url: '/v2/analytics.getUsage',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    })
    return { status: response.statusCode, body: response.json() }
  }
  const rootKey = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { authorization: `Bearer ${key}` }
  }

  it("sums an identity's usage over its keys in every api, per UTC day, billing what each api bills", async () => {
    const [payments, search] = [await newApi(), await newApi()]
    const [paying, searching, other] = [
      await newKey(payments, acme),
      await newKey(search, acme),
      await newKey(payments, globex),
    ]
    await record([
      { keyId: paying, time: MAY_18 + 1 * HOUR, outcome: 'VALID', credits: 2 },
      { keyId: paying, time: MAY_18 + 23 * HOUR, outcome: 'RATE_LIMITED' },
      { keyId: searching, time: MAY_18 + 2 * HOUR, outcome: 'VALID', credits: 1 },
      { keyId: searching, time: MAY_18 + 2 * DAY + HOUR, outcome: 'RATE_LIMITED' },
      { keyId: searching, time: MAY_18 + 2 * DAY + HOUR, outcome: 'USAGE_EXCEEDED' },
      // Another identity's, and one before the range: neither counts.
      { keyId: other, time: MAY_18 + HOUR, outcome: 'VALID' },
      { keyId: paying, time: MAY_18 - HOUR, outcome: 'VALID' },
    ])
    const asked = { externalId: acme, start: MAY_18, end: NOW, granularity: 'day' }
    const first = await v1(asked)
    expect(first.status).toBe(200)
    expect(first.body.apiIds).toBe('*')
    expect(
      first.body.periods.map((p: any) => [p.start, p.end, p.verifications.total, p.billable, p.spentCredits]),
    ).toEqual([
      [MAY_18, MAY_18 + DAY, 3, 2, 3],
      [MAY_18 + DAY, MAY_18 + 2 * DAY, 0, 0, 0],
      [MAY_18 + 2 * DAY, MAY_18 + 3 * DAY, 2, 0, 0],
    ])
    expect(first.body.total).toEqual({
      verifications: {
        valid: 2,
        rateLimited: 2,
        usageExceeded: 1,
        disabled: 0,
        expired: 0,
        forbidden: 0,
        insufficientPermissions: 0,
        notFound: 0,
        total: 5,
      },
      billable: 2,
      spentCredits: 3,
    })

    // The search api bills its refusals too: only its rows change what is billable.
    const update = await stack.post('apis.updateApi', { apiId: search, billableOutcomes: ['VALID', 'RATE_LIMITED'] })
    expect(update.status).toBe(200)
    expect(update.body.billableOutcomes).toEqual(['RATE_LIMITED', 'VALID'])
    const billed = await v2(asked)
    expect(billed.status).toBe(200)
    expect(billed.body.data.periods.map((p: any) => p.billable)).toEqual([2, 0, 1])
    expect(billed.body.data.total.billable).toBe(3)
    // Back to the default.
    expect(
      (await stack.post('apis.updateApi', { apiId: search, billableOutcomes: null })).body.billableOutcomes,
    ).toEqual(['VALID'])
    expect((await v2(asked)).body.data.total.billable).toBe(2)

    // Narrowed to one api; one key's usage; an api's usage (every key's).
    const narrowed = await v1({ ...asked, apiId: search })
    expect([narrowed.body.apiIds, narrowed.body.total.verifications.total]).toEqual([[search], 3])
    // By the month: from the start of the month holding start, so the row before May 18th counts too.
    const oneKey = await v2({ keyId: paying, start: MAY_18, end: NOW, granularity: 'month' })
    expect(oneKey.body.data.periods).toHaveLength(1)
    expect(oneKey.body.data.periods[0]).toMatchObject({ start: Date.UTC(2031, 4, 1), end: Date.UTC(2031, 5, 1) })
    expect(oneKey.body.data.total.verifications.total).toBe(3)
    const api = await v2({ apiIds: [payments], start: MAY_18 - DAY, end: NOW })
    expect(api.body.data.total.verifications.total).toBe(4)
  })

  it('counts the periods that start before end: an end on a period’s start leaves that period out', async () => {
    const keyId = await newKey(await newApi())
    await record([
      { keyId, time: MAY_18 + 12 * HOUR, outcome: 'VALID' },
      { keyId, time: MAY_18 + DAY, outcome: 'VALID' },
    ])
    const summary = async (start: number, end: number, granularity: string) => {
      const { body } = await v2({ keyId, start, end, granularity })
      return [body.data.periods.length, body.data.periods.at(-1).end, body.data.total.verifications.total]
    }
    // A day, asked as from its start to the next one's: that day alone, as billed on its own.
    expect(await summary(MAY_18, MAY_18 + DAY, 'day')).toEqual([1, MAY_18 + DAY, 1])
    expect(await summary(MAY_18, MAY_18 + DAY, 'hour')).toEqual([24, MAY_18 + DAY, 1])
    expect(await summary(MAY_18, MAY_18 + DAY + 1, 'day')).toEqual([2, MAY_18 + 2 * DAY, 2])
    const [may, june] = [Date.UTC(2031, 4, 1), Date.UTC(2031, 5, 1)]
    expect(await summary(may, june, 'month')).toEqual([1, june, 2])
  })

  it('spans only the apis the root key may read, and refuses what it may not', async () => {
    const [readable, hidden] = [await newApi(), await newApi()]
    const [seen, unseen] = [await newKey(readable, initech), await newKey(hidden, initech)]
    await record([
      { keyId: seen, time: MAY_18 + HOUR, outcome: 'VALID' },
      { keyId: unseen, time: MAY_18 + HOUR, outcome: 'VALID' },
    ])
    const narrow = await rootKey([`api.${readable}.read_analytics`])
    const asked = { externalId: initech, start: MAY_18, end: NOW, granularity: 'month' }
    const spanned = await v1(asked, narrow)
    expect(spanned.status).toBe(200)
    expect([spanned.body.apiIds, spanned.body.total.verifications.total]).toEqual([[readable], 1])
    expect((await v2({ ...asked, apiIds: [hidden] }, narrow)).status).toBe(403)
    expect((await v2({ keyId: unseen, start: MAY_18 }, narrow)).status).toBe(403)
    // read_api reads the api, not its usage.
    const reader = await rootKey([`api.${readable}.read_api`])
    expect((await v1(asked, reader)).status).toBe(403)
    expect((await v1({ ...asked, apiId: readable }, reader)).status).toBe(403)
    expect((await v2(asked, { authorization: `Bearer ${generateRootKey().key}` })).status).toBe(401)
  })

  it('refuses input it cannot answer with a 4xx in the wire’s shape', async () => {
    const apiId = await newApi()
    const keyId = await newKey(apiId, 'hooli')
    const cases: [unknown, number][] = [
      [{ start: MAY_18 }, 400],
      [{ externalId: 'hooli', start: NOW, end: MAY_18 }, 400],
      [{ externalId: 'hooli', keyId, start: MAY_18 }, 400],
      [{ keyId, apiIds: [apiId], start: MAY_18 }, 400],
      [{ externalId: 'hooli', start: NOW - 2_000 * HOUR, granularity: 'hour' }, 400],
      [{ externalId: 'hooli', start: MAY_18, granularity: 'week' }, 400],
      [{ externalId: 'hooli', start: -1 }, 400],
      [{ keyId: 'key_missing000000000000000', start: MAY_18 }, 404],
      [{ apiIds: ['api_missing000000000000000'], start: MAY_18 }, 404],
    ]
    for (const [body, status] of cases) {
      const answer = await v2(body)
      expect(answer.status, JSON.stringify(body)).toBe(status)
      expect(answer.body.error, JSON.stringify(body)).toMatchObject({ status })
    }
    const v1Answer = await v1({ externalId: 'hooli', start: MAY_18, granularity: 'week' })
    expect(v1Answer.status).toBe(400)
    expect(v1Answer.body.error.code).toBe('BAD_REQUEST')
  })
})
