import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  ALERTS_EVERY_MS,
  UsageAlerts,
  type SubjectThresholds,
  type UsageAlertsDeps,
  type UsageThresholdEventData,
} from '../../control-plane/webhooks/usage/usage-alerts.js'
import { newWebhookSecret } from '../../control-plane/webhooks/webhook-secret.js'
import { MemoryAnalyticsBufferStore } from '../../shared/store/analytics-buffer/memory-analytics-buffer-store.js'
import { MemoryWebhookStore } from '../../shared/store/webhooks/memory-webhook-store.js'
import {
  USAGE_THRESHOLD_INDEX,
  usageSubjectMember,
  usagePeriodAt,
  type UsageThreshold,
} from '../../shared/usage-threshold.js'
import type { WebhookEndpoint, WebhookEvent } from '../../shared/webhook.js'
import {
  ingestAnalytics,
  ManualClock,
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { useAnalyticsEngine } from '../support/analytics-engine.js'
import { insertVerifications, type VerificationRows } from '../support/verification-rows.js'
import { useRedisServer } from '../support/redis-server.js'
import { overriding } from '../support/store-overrides.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

const DAY = 86_400_000
const redis = useRedisServer()
const analytics = useAnalyticsEngine()

/**
 * UsageAlerts over the file's engine, its rows inserted as the ingest inserts them, on a day of its own months back:
 * which thresholds a run sends, to whom, once a period, and again in the next.
 */
describe('usage alerts over the engine', () => {
  let made = 0
  const unique = (prefix: string) => `${prefix}_usage_alerts_${made++}`
  // The 10th of the month before last, 10:00 UTC: within the rows' retention, and days no other test of the file uses.
  const now = new Date()
  const day = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 10)
  const noon = day + 10 * 3_600_000
  /** Inserts, at `time`, per row `n` verifications of a key (of an api, an identity or '') answered `outcome`. */
  const record = (time: number, rows: VerificationRows) => insertVerifications(analytics.engine, time, rows, unique)
  const endpoint = (eventTypes: WebhookEndpoint['eventTypes'], apiIds: string[] = []): WebhookEndpoint => ({
    id: unique('whep'),
    url: 'https://hooks.example.com/usage',
    eventTypes,
    apiIds,
    enabled: true,
    secrets: [newWebhookSecret(day)],
    createdAt: day,
  })

  /** A run's parts: the subjects' thresholds as `held` has them, listed in a memory store's index. */
  const alertsOf = async (
    clock: ManualClock,
    held: Map<string, SubjectThresholds>,
    billed: string[],
    options: {
      marks?: UsageAlertsDeps['marks']
      webhooks?: MemoryWebhookStore
      thresholdsOf?: UsageAlertsDeps['thresholdsOf']
    } = {},
  ) => {
    const backend = await openBackend()
    for (const member of held.keys()) await backend.store.entities.addToIndex(USAGE_THRESHOLD_INDEX, member)
    const webhooks = options.webhooks ?? new MemoryWebhookStore()
    // The endpoints each event was queued to, as the store was asked.
    const queuedTo = new Map<string, string[]>()
    const alerts = new UsageAlerts({
      engine: analytics.engine,
      clock,
      webhooks: {
        listEndpoints: () => webhooks.listEndpoints(),
        getEvent: (id) => webhooks.getEvent(id),
        enqueue: async (event, endpointIds, dueAt) => {
          await webhooks.enqueue(event, endpointIds, dueAt)
          queuedTo.set(event.id, [...(queuedTo.get(event.id) ?? []), ...endpointIds].sort())
        },
      },
      index: backend.store.entities,
      thresholdsOf: options.thresholdsOf ?? (async (subject) => held.get(usageSubjectMember(subject))),
      marks: options.marks ?? new MemoryAnalyticsBufferStore(),
      apiSettings: {
        of: async (apiId) => (billed.includes(apiId) ? { billableOutcomes: ['RATE_LIMITED', 'VALID'] } : {}),
      },
      log: pino({ level: 'silent' }),
    })
    const members = async () =>
      (await backend.store.entities.listIndex(USAGE_THRESHOLD_INDEX, { limit: 100 })).members.sort()
    const lines = async () => {
      const events = (await webhooks.listEvents(0, 1_000)).filter((event) => event.type === 'usage.threshold')
      return events.map((event) => line(event, queuedTo.get(event.id) ?? [])).sort(byText)
    }
    return { alerts, webhooks, members, lines, queuedTo, index: backend.store.entities }
  }
  /** An event as a line: whose, which threshold, the usage, the period's start; and the endpoints it went to. */
  const line = (event: WebhookEvent, to: string[]) => {
    const data = event.data as unknown as UsageThresholdEventData
    const { measure, period, value } = data.threshold
    return [data.externalId ?? data.keyId, data.apiId, measure, period, value, data.usage, data.period.start, to]
  }
  const byText = (x: unknown, y: unknown) => JSON.stringify(x).localeCompare(JSON.stringify(y))

  it('sends each crossing once a period: day and month, billable by each api and credits', async () => {
    const [first, second] = [unique('api'), unique('api')]
    const [paying, other, metered] = [unique('key'), unique('key'), unique('key')]
    const customer = unique('customer')
    // Yesterday 4 billable; today 2 VALID + a RATE_LIMITED the second api bills + one the first does not.
    await record(day - DAY + 60_000, [[first, paying, customer, 'VALID', 4]])
    await record(noon - 60_000, [
      [first, paying, customer, 'VALID', 2],
      [second, other, customer, 'RATE_LIMITED', 1],
      [first, paying, customer, 'RATE_LIMITED', 1],
      [first, metered, '', 'VALID', 1, 5],
    ])
    // The month before's last second and the month after's first: in neither this day nor this month.
    const { start: monthStart, end: monthEnd } = usagePeriodAt('month', day)
    for (const time of [monthStart - 1_000, monthEnd]) await record(time, [[first, paying, customer, 'VALID', 5, 2]])
    const thresholds: UsageThreshold[] = [
      { measure: 'billable', period: 'day', value: 3 },
      { measure: 'billable', period: 'day', value: 4 },
      { measure: 'billable', period: 'month', value: 7 },
      { measure: 'credits', period: 'month', value: 1 },
    ]
    const held = new Map<string, SubjectThresholds>([
      [usageSubjectMember({ identity: customer }), { thresholds }],
      [
        usageSubjectMember({ keyId: metered }),
        { thresholds: [{ measure: 'credits', period: 'day', value: 5 }], apiId: first },
      ],
    ])
    const clock = new ManualClock(noon)
    const { alerts, webhooks, lines } = await alertsOf(clock, held, [second])
    const [everyApi, firstApi, secondApi, hourly] = [
      endpoint(['usage.threshold']),
      endpoint(['usage.threshold'], [first]),
      endpoint(['usage.threshold'], [second]),
      endpoint(['usage.hourly']),
    ]
    for (const made of [everyApi, firstApi, secondApi, hourly]) await webhooks.createEndpoint(made)

    expect(await alerts.run(clock.ms)).toBe(3)
    const month = usagePeriodAt('month', noon).start
    // An identity's usage is over every api: to unscoped endpoints only. A key's carries its api.
    expect(await lines()).toEqual(
      [
        [customer, undefined, 'billable', 'day', 3, 3, day, [everyApi.id]],
        [customer, undefined, 'billable', 'month', 7, 7, month, [everyApi.id]],
        [metered, first, 'credits', 'day', 5, 5, day, [everyApi.id, firstApi.id].sort()],
      ].sort(byText),
    )
    // Nothing new: nothing sent again.
    expect(await alerts.run(clock.ms)).toBe(0)

    // One more today: the day's 4 is crossed, the 3 and the month's 7 are not sent again.
    await record(noon, [[first, paying, customer, 'VALID', 1]])
    expect(await alerts.run(clock.ms)).toBe(1)
    expect((await lines()).filter((row) => row[4] === 4)).toEqual([
      [customer, undefined, 'billable', 'day', 4, 4, day, [everyApi.id]],
    ])

    // The next day: the day's thresholds count from zero, and are crossed again; the month's is not sent again.
    clock.ms = noon + DAY
    await record(noon + DAY, [[first, paying, customer, 'VALID', 3]])
    expect(await alerts.run(clock.ms)).toBe(1)
    expect((await lines()).filter((row) => row[6] === day + DAY)).toEqual([
      [customer, undefined, 'billable', 'day', 3, 3, day + DAY, [everyApi.id]],
    ])
    expect(await webhooks.listEvents(0, 1_000)).toHaveLength(5)
  })

  it('queues a crossing once when the run dies before marking it, and marks nothing while nobody listens', async () => {
    const api = unique('api')
    const key = unique('key')
    await record(noon, [[api, key, '', 'VALID', 2]])
    const held = new Map<string, SubjectThresholds>([
      [
        usageSubjectMember({ keyId: key }),
        { thresholds: [{ measure: 'billable', period: 'day', value: 2 }], apiId: api },
      ],
    ])
    const marks = new MemoryAnalyticsBufferStore()
    let fails = 1
    const failing: UsageAlertsDeps['marks'] = {
      readMark: (name) => marks.readMark(name),
      // The first threshold's mark fails, once.
      raiseMark: async (name, value) => {
        if (name.startsWith('threshold|') && fails-- > 0) throw new Error('store unreachable')
        await marks.raiseMark(name, value)
      },
    }
    const clock = new ManualClock(noon + 60_000)
    const { alerts, webhooks, queuedTo } = await alertsOf(clock, held, [], { marks: failing })
    // No endpoint wants it: nothing sent, nothing marked.
    await webhooks.createEndpoint(endpoint(['usage.daily']))
    expect(await alerts.run(clock.ms)).toBe(0)
    const listening = endpoint(['usage.threshold'])
    await webhooks.createEndpoint(listening)
    await expect(alerts.run(clock.ms)).rejects.toThrow('store unreachable')
    expect(await alerts.run(clock.ms)).toBe(0)
    expect(await alerts.run(clock.ms)).toBe(0)
    const events = await webhooks.listEvents(0, 1_000)
    expect(events).toHaveLength(1)
    expect([...queuedTo]).toEqual([[events[0]!.id, [listening.id]]])
  })

  it('drops a gone key from the index, keeps a subject holding none for now, and looks every 10 s at most', async () => {
    const bare = usageSubjectMember({ identity: unique('customer') })
    const held = new Map<string, SubjectThresholds>([
      [usageSubjectMember({ keyId: unique('key') }), 'gone'],
      [bare, undefined],
    ])
    const clock = new ManualClock(noon)
    const { alerts, webhooks, members, index } = await alertsOf(clock, held, [])
    await webhooks.createEndpoint(endpoint(['usage.threshold']))
    await alerts.runIfDue(clock.ms)
    expect(await members()).toEqual([bare])
    // Another key gone: not looked at within ALERTS_EVERY_MS of the last look, then dropped.
    const later = usageSubjectMember({ keyId: unique('key') })
    held.set(later, 'gone')
    await index.addToIndex(USAGE_THRESHOLD_INDEX, later)
    clock.advance(ALERTS_EVERY_MS - 1)
    await alerts.runIfDue(clock.ms)
    expect(await members()).toEqual([bare, later].sort())
    clock.advance(1)
    await alerts.runIfDue(clock.ms)
    expect(await members()).toEqual([bare])
  })

  it('keeps listing a rolled key written just after a run found it missing', async () => {
    const rolled = usageSubjectMember({ keyId: unique('key') })
    const written: SubjectThresholds = { thresholds: [{ measure: 'billable', period: 'day', value: 1 }], apiId: 'api' }
    let reads = 0
    const clock = new ManualClock(noon)
    const { alerts, webhooks, members } = await alertsOf(clock, new Map([[rolled, 'gone']]), [], {
      // A roll lists its new key before writing it: the run's first read finds no key, the roll writes it next.
      thresholdsOf: async () => (reads++ === 0 ? 'gone' : written),
    })
    await webhooks.createEndpoint(endpoint(['usage.threshold']))
    await alerts.run(clock.ms)
    expect(await members()).toEqual([rolled])
  })

  it('notes no crossing that no endpoint takes: an endpoint added later in the period is told', async () => {
    const [api, other] = [unique('api'), unique('api')]
    const key = unique('key')
    const customer = unique('customer')
    await record(noon, [[api, key, customer, 'VALID', 2]])
    const thresholds: UsageThreshold[] = [{ measure: 'billable', period: 'day', value: 2 }]
    const held = new Map<string, SubjectThresholds>([
      [usageSubjectMember({ identity: customer }), { thresholds }],
      [usageSubjectMember({ keyId: key }), { thresholds, apiId: api }],
    ])
    const clock = new ManualClock(noon + 60_000)
    const { alerts, webhooks, lines } = await alertsOf(clock, held, [])
    // Scoped to another api: it takes neither the identity's crossing (over every api) nor the key's.
    await webhooks.createEndpoint(endpoint(['usage.threshold'], [other]))
    expect(await alerts.run(clock.ms)).toBe(0)
    const scoped = endpoint(['usage.threshold'], [api])
    await webhooks.createEndpoint(scoped)
    clock.advance(60_000)
    expect(await alerts.run(clock.ms)).toBe(1)
    const unscoped = endpoint(['usage.threshold'])
    await webhooks.createEndpoint(unscoped)
    clock.advance(60_000)
    expect(await alerts.run(clock.ms)).toBe(1)
    expect(await lines()).toEqual(
      [
        [customer, undefined, 'billable', 'day', 2, 2, day, [unscoped.id]],
        [key, api, 'billable', 'day', 2, 2, day, [scoped.id]],
      ].sort(byText),
    )
  })

  it("sends a month's crossing once in it, after its event is no longer kept", async () => {
    const api = unique('api')
    const key = unique('key')
    await record(noon, [[api, key, '', 'VALID', 1]])
    const held = new Map<string, SubjectThresholds>([
      [
        usageSubjectMember({ keyId: key }),
        { thresholds: [{ measure: 'billable', period: 'month', value: 1 }], apiId: api },
      ],
    ])
    const clock = new ManualClock(noon + 60_000)
    const { alerts, webhooks } = await alertsOf(clock, held, [])
    await webhooks.createEndpoint(endpoint(['usage.threshold']))
    expect(await alerts.run(clock.ms)).toBe(1)
    // Days later, in the same month: the event is pruned (events are kept a day past their retries), the mark stays.
    clock.advance(3 * DAY)
    await webhooks.pruneEvents(clock.ms)
    expect(await webhooks.listEvents(0, 1_000)).toEqual([])
    expect(await alerts.run(clock.ms)).toBe(0)
  })

  it("sends a day's last crossings once its rows are in, after a control plane was down over midnight", async () => {
    const api = unique('api')
    const key = unique('key')
    const midnight = day + 2 * DAY
    const held = new Map<string, SubjectThresholds>([
      [
        usageSubjectMember({ keyId: key }),
        { thresholds: [{ measure: 'billable', period: 'day', value: 1 }], apiId: api },
      ],
    ])
    const clock = new ManualClock(midnight - 60_000)
    const { alerts, webhooks, lines } = await alertsOf(clock, held, [])
    const listening = endpoint(['usage.threshold'])
    await webhooks.createEndpoint(listening)
    expect(await alerts.run(midnight - 70_000)).toBe(0)
    await record(midnight - 2_000, [[api, key, '', 'VALID', 1]])
    // The next look half an hour later.
    clock.ms = midnight + 30 * 60_000
    expect(await alerts.run(clock.ms - 10_000)).toBe(1)
    clock.advance(ALERTS_EVERY_MS)
    expect(await alerts.run(clock.ms - 10_000)).toBe(0)
    expect(await lines()).toEqual([[key, api, 'billable', 'day', 1, 1, midnight - DAY, [listening.id]]])
  })

  it("sends a crossing in a month's last seconds for its day and month once its rows are in, after midnight", async () => {
    const api = unique('api')
    const key = unique('key')
    // The end of the month before last: midnight, its last day's end and its own.
    const end = usagePeriodAt('month', day).end
    const held = new Map<string, SubjectThresholds>([
      [
        usageSubjectMember({ keyId: key }),
        {
          thresholds: [
            { measure: 'billable', period: 'day', value: 1 },
            { measure: 'billable', period: 'day', value: 2 },
            { measure: 'billable', period: 'month', value: 1 },
          ],
          apiId: api,
        },
      ],
    ])
    const clock = new ManualClock(end - 5_000)
    const { alerts, webhooks, lines } = await alertsOf(clock, held, [])
    const listening = endpoint(['usage.threshold'])
    await webhooks.createEndpoint(listening)
    expect(await alerts.run(end - 15_000)).toBe(0)
    // The new day's first verification is in first: its crossings are sent for the new day and month.
    await record(end + 1_000, [[api, key, '', 'VALID', 1]])
    clock.ms = end + 10_000
    expect(await alerts.run(end - 1_000)).toBe(2)
    // Then the last day's, late, made 2 s before midnight: sent for the day and the month it was made in.
    await record(end - 2_000, [[api, key, '', 'VALID', 1]])
    clock.ms = end + 20_000
    expect(await alerts.run(end + 5_000)).toBe(2)
    // Looked at with every row of it in (the watermark past midnight), the day before is looked at no more: a row
    // later than the watermark said crosses nothing.
    await record(end - 1_000, [[api, key, '', 'VALID', 1]])
    clock.ms = end + 30_000
    expect(await alerts.run(end + 15_000)).toBe(0)
    const to = [listening.id]
    expect(await lines()).toEqual(
      [
        [key, api, 'billable', 'day', 1, 1, end - DAY, to],
        [key, api, 'billable', 'month', 1, 1, usagePeriodAt('month', day).start, to],
        [key, api, 'billable', 'day', 1, 1, end, to],
        [key, api, 'billable', 'month', 1, 1, end, to],
      ].sort(byText),
    )
  })
})

/**
 * Thresholds set through the API on both stores, crossed by verifications through a verifier, sent to receivers on
 * this machine that verify every signature. The clock is the real time (receivers check signatures against it), or
 * the next UTC day's first minute when the real one is about to end, so that the test's few minutes stay in one day.
 */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`usage thresholds through the API on the ${storeKind} store`, () => {
    const real = Date.now()
    const dayEnd = Math.ceil(real / DAY) * DAY
    const clock = new ManualClock(dayEnd - real < 3 * 60_000 ? dayEnd + 1_000 : real)
    let backend: Backend
    let controlPlane: TestServer
    let verifier: TestServer

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({
        backend,
        clock,
        webhookPolicy: { allowPrivateAddresses: true },
        analytics: analytics.analytics(`usage-alerts-${storeKind}`),
      })
      verifier = await startTestVerifier({ backend, clock })
    })
    afterAll(async () => {
      await verifier?.close()
      await controlPlane?.close()
      await backend?.close()
    })

    const send = async (version: 'v1' | 'v2', path: string, payload: object) =>
      controlPlane.app.inject({
        method: 'POST',
        url: `/${version}/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
    const call = async (version: 'v1' | 'v2', path: string, payload: object) => {
      const response = await send(version, path, payload)
      expect(response.statusCode, response.body).toBe(200)
      return response.json()
    }
    const read = async (path: string) => {
      const response = await controlPlane.app.inject({
        method: 'GET',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      })
      expect(response.statusCode, response.body).toBe(200)
      return response.json()
    }
    const verify = async (key: string, times: number, cost?: number) => {
      for (let i = 0; i < times; i++) {
        const payload = cost === undefined ? { key } : { key, remaining: { cost } }
        const response = await verifier.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload })
        expect(response.json().valid).toBe(true)
      }
    }
    /** An ingest pass with the alerts due: they look at most every ALERTS_EVERY_MS. */
    const pass = async () => {
      clock.advance(ALERTS_EVERY_MS)
      await ingestAnalytics(controlPlane, verifier)
    }
    const listed = async () =>
      (await backend.store.entities.listIndex(USAGE_THRESHOLD_INDEX, { limit: 100 })).members.sort()

    it('sets thresholds on identities and keys, refuses bad ones, and sends each crossing once', async () => {
      const everything = await startWebhookReceiver()
      const scoped = await startWebhookReceiver()
      try {
        const { apiId } = await call('v1', 'apis.createApi', { name: 'metered' })
        const externalId = `acme-alerts-${storeKind}`
        const a = await call('v1', 'keys.createKey', { apiId, externalId })
        const b = await call('v1', 'keys.createKey', { apiId, remaining: 100 })
        const unscoped = await call('v1', 'webhooks.createEndpoint', {
          url: everything.url,
          eventTypes: ['usage.threshold'],
        })
        everything.useSecret(unscoped.secret)
        const narrow = await call('v1', 'webhooks.createEndpoint', {
          url: scoped.url,
          eventTypes: ['usage.threshold'],
          apiIds: [apiId],
        })
        scoped.useSecret(narrow.secret)

        const three = { measure: 'billable', period: 'day', value: 3 }
        const set = await call('v2', 'identities.updateIdentity', {
          identity: externalId,
          usageThresholds: [three, three],
        })
        expect(set.data.usageThresholds).toEqual([three])
        expect((await read(`identities.getIdentity?externalId=${externalId}`)).usageThresholds).toEqual([three])
        const four = { measure: 'credits', period: 'day', value: 4 }
        await call('v1', 'keys.updateKey', { keyId: b.keyId, usageThresholds: [four] })
        expect((await read(`keys.getKey?keyId=${b.keyId}`)).usageThresholds).toEqual([four])
        expect((await call('v2', 'keys.getKey', { keyId: b.keyId })).data.usageThresholds).toEqual([four])
        expect((await read(`keys.getKey?keyId=${a.keyId}`)).usageThresholds).toBeUndefined()
        expect(await listed()).toEqual([`identity:${externalId}`, `key:${b.keyId}`].sort())

        // Refused whole, nothing changed: a value under 1 or not whole, an unknown measure, more than ten.
        for (const [version, path, payload] of [
          ['v2', 'identities.updateIdentity', { identity: externalId, usageThresholds: [{ ...three, value: 0 }] }],
          ['v2', 'identities.updateIdentity', { identity: externalId, usageThresholds: [{ ...three, measure: 'x' }] }],
          [
            'v1',
            'identities.updateIdentity',
            {
              externalId,
              usageThresholds: Array.from({ length: 11 }, (_, i) => ({ ...three, value: i + 1 })),
            },
          ],
          ['v1', 'keys.updateKey', { keyId: b.keyId, usageThresholds: [{ ...four, value: 1.5 }] }],
          ['v2', 'keys.updateKey', { keyId: b.keyId, usageThresholds: [{ ...four, period: 'week' }] }],
        ] as const) {
          const refused = await send(version, path, payload)
          expect(refused.statusCode, refused.body).toBe(400)
        }
        expect((await read(`keys.getKey?keyId=${b.keyId}`)).usageThresholds).toEqual([four])

        await pass()
        await verify(a.key, 2)
        await verify(b.key, 1, 2)
        await pass()
        await verify(a.key, 1)
        await verify(b.key, 1, 2)
        await pass()
        // More after the crossing: nothing sent again.
        await verify(a.key, 2)
        await pass()

        const line = (event: { data: Record<string, any> }) => [
          event.data.externalId ?? event.data.keyId,
          event.data.threshold.measure,
          event.data.usage,
        ]
        await waitFor(() => everything.events.length >= 2 || undefined, 'the two crossings at the unscoped endpoint')
        await waitFor(() => scoped.events.length >= 1 || undefined, "the key's crossing at the scoped endpoint")
        await pass()
        expect(everything.events.map(line).sort()).toEqual(
          [
            [externalId, 'billable', 3],
            [b.keyId, 'credits', 4],
          ].sort(),
        )
        expect(scoped.events.map(line)).toEqual([[b.keyId, 'credits', 4]])
        expect([...everything.events, ...scoped.events].every((event) => event.verified)).toBe(true)
        expect(scoped.events[0]!.data.apiId).toBe(apiId)

        // Cleared, the identity leaves the index; a deleted key leaves it at the next look.
        await call('v1', 'identities.updateIdentity', { externalId, usageThresholds: [] })
        expect((await read(`identities.getIdentity?externalId=${externalId}`)).usageThresholds).toBeUndefined()
        await call('v1', 'keys.deleteKey', { keyId: b.keyId })
        await pass()
        expect(await listed()).toEqual([])
      } finally {
        await everything.stop()
        await scoped.stop()
      }
    })

    it('lists the identities and keys holding thresholds through every write that sets, clears, copies or deletes them', async () => {
      const { apiId } = await call('v1', 'apis.createApi', { name: 'listed' })
      const externalId = `acme-listed-${storeKind}`
      const { keyId } = await call('v1', 'keys.createKey', { apiId })
      const ours = [`identity:${externalId}`, `key:${keyId}`]
      const ourListed = async () => (await listed()).filter((member) => ours.includes(member))
      const thresholdsOfKey = async (id: string) => (await read(`keys.getKey?keyId=${id}`)).usageThresholds
      const ten = { measure: 'billable', period: 'day', value: 10 }

      // A key's: set, kept by a write of another field, cleared by null (v2) and by [] (v1).
      await call('v2', 'keys.updateKey', { keyId, usageThresholds: [ten] })
      await call('v1', 'keys.updateKey', { keyId, name: 'renamed' })
      expect(await thresholdsOfKey(keyId)).toEqual([ten])
      expect(await ourListed()).toEqual([`key:${keyId}`])
      await call('v2', 'keys.updateKey', { keyId, usageThresholds: null })
      expect(await thresholdsOfKey(keyId)).toBeUndefined()
      expect(await ourListed()).toEqual([])
      await call('v1', 'keys.updateKey', { keyId, usageThresholds: [ten] })
      expect(await ourListed()).toEqual([`key:${keyId}`])
      await call('v1', 'keys.updateKey', { keyId, usageThresholds: [] })
      expect(await ourListed()).toEqual([])

      // Rolled, the new key holds the old one's thresholds and is listed beside it (in its grace period).
      await call('v1', 'keys.updateKey', { keyId, usageThresholds: [ten] })
      const rolled = (await call('v2', 'keys.rerollKey', { keyId, expiration: 60_000 })).data.keyId
      ours.push(`key:${rolled}`)
      expect(await thresholdsOfKey(rolled)).toEqual([ten])
      const keys = [`key:${keyId}`, `key:${rolled}`].sort()
      expect(await ourListed()).toEqual(keys)

      // An identity's: deleted, it is unlisted; made again under its externalId, it holds none until set.
      const { identityId } = await call('v1', 'identities.createIdentity', { externalId })
      await call('v2', 'identities.updateIdentity', { identity: externalId, usageThresholds: [ten] })
      await call('v1', 'identities.updateIdentity', { identityId, meta: { plan: 'pro' } })
      expect(await ourListed()).toEqual([`identity:${externalId}`, ...keys])
      await call('v1', 'identities.deleteIdentity', { identityId })
      expect(await ourListed()).toEqual(keys)
      await call('v1', 'identities.createIdentity', { externalId })
      expect((await read(`identities.getIdentity?externalId=${externalId}`)).usageThresholds).toBeUndefined()
      expect(await ourListed()).toEqual(keys)
      await call('v1', 'identities.updateIdentity', { externalId, usageThresholds: [ten] })
      expect(await ourListed()).toEqual([`identity:${externalId}`, ...keys])
    })
  })
}

/**
 * A clear and a set of one subject's thresholds at once, the set landing last: the index must follow the record the
 * set left, or its thresholds are never looked at. Either the set runs whole between the clear's write and its
 * unlisting; or the set lists the subject before the clear unlists it, and writes once the clear has read the record
 * again.
 */
describe('a clear and a set of usage thresholds at once', () => {
  type Call = (path: string, payload?: object) => Promise<any>
  /** A subject made through the API (v1): its index member, the write of its thresholds, and what it shows. */
  const subjects = {
    key: async (call: Call) => {
      const { apiId } = await call('apis.createApi', { name: 'raced' })
      const { keyId } = await call('keys.createKey', { apiId })
      return {
        member: `key:${keyId}`,
        write: (usageThresholds: object[]) => call('keys.updateKey', { keyId, usageThresholds }),
        shown: async () => (await call(`keys.getKey?keyId=${keyId}`)).usageThresholds,
      }
    },
    identity: async (call: Call) => {
      const externalId = 'acme-raced'
      await call('identities.createIdentity', { externalId })
      return {
        member: `identity:${externalId}`,
        write: (usageThresholds: object[]) => call('identities.updateIdentity', { externalId, usageThresholds }),
        shown: async () => (await call(`identities.getIdentity?externalId=${externalId}`)).usageThresholds,
      }
    },
  }

  for (const [kind, make] of Object.entries(subjects)) {
    for (const whole of [true, false]) {
      const how = whole ? 'runs whole before the clear unlists it' : 'lists it first and writes after the clear'
      it(`leaves the ${kind} listed when the set ${how}`, async () => {
        const backend = await openBackend()
        let member: string | undefined
        let setting: (() => Promise<unknown>) | undefined
        let racing: Promise<unknown> | undefined
        let paused = false
        let listedFirst!: () => void
        const pointerWritten = new Promise<void>((resolve) => (listedFirst = resolve))
        let clearDone!: () => void
        const cleared = new Promise<void>((resolve) => (clearDone = resolve))
        const store = overriding(backend.store, {
          entities: {
            // The clear, its record written, unlists the subject only once the set is done, or has listed it.
            removeFromIndex: async (index: string, removed: string) => {
              if (index === USAGE_THRESHOLD_INDEX && removed === member && setting && racing === undefined) {
                racing = setting()
                await (whole ? racing : pointerWritten)
              }
              await backend.store.entities.removeFromIndex(index, removed)
            },
            // The set, having listed it, writes its record only once the clear is done.
            addToIndex: async (index: string, added: string) => {
              await backend.store.entities.addToIndex(index, added)
              if (!whole && index === USAGE_THRESHOLD_INDEX && added === member && racing && !paused) {
                paused = true
                listedFirst()
                await cleared
              }
            },
          },
        })
        const controlPlane = await startTestControlPlane({ backend: { ...backend, store } })
        try {
          const call: Call = async (path, payload) => {
            const response = await controlPlane.app.inject({
              method: payload === undefined ? 'GET' : 'POST',
              url: `/v1/${path}`,
              headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
              ...(payload === undefined ? {} : { payload }),
            })
            expect(response.statusCode, response.body).toBe(200)
            return response.json()
          }
          const subject = await make(call)
          member = subject.member
          await subject.write([{ measure: 'credits', period: 'month', value: 5 }])
          const set = [{ measure: 'billable', period: 'day', value: 7 }]
          setting = () => subject.write(set)
          await subject.write([])
          clearDone()
          await racing
          expect(await subject.shown()).toEqual(set)
          const index = await backend.store.entities.listIndex(USAGE_THRESHOLD_INDEX, { limit: 10 })
          expect(index.members).toEqual([member])
        } finally {
          await controlPlane.close()
          await backend.close()
        }
      })
    }
  }
})
