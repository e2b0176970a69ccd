import { pino } from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GONE_AFTER_MS, WATERMARK } from '../../control-plane/analytics/ingest/analytics-ingest.js'
import {
  UsageEvents,
  usageEventMarks,
  type UsageEventData,
  type UsageEventsDeps,
} from '../../control-plane/webhooks/usage/usage-events.js'
import { newWebhookSecret } from '../../control-plane/webhooks/webhook-secret.js'
import { MemoryAnalyticsBufferStore } from '../../shared/store/analytics-buffer/memory-analytics-buffer-store.js'
import { MemoryWebhookStore } from '../../shared/store/webhooks/memory-webhook-store.js'
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
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver } from '../support/webhook-receiver.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const redis = useRedisServer()
const analytics = useAnalyticsEngine()

/**
 * usage.hourly and usage.daily on both stores: verifications through a verifier, ingested by the control plane, sent
 * once their period is complete to receivers on this machine that verify every signature. The clock starts on a UTC
 * day at least a day back, so that it can be brought to the real time (which receivers check signatures against) past
 * every period the test uses.
 */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`usage events on the ${storeKind} store`, () => {
    const day = Math.floor((Date.now() - 25 * HOUR) / DAY) * DAY
    const clock = new ManualClock(day + 5 * 60_000)
    let backend: Backend
    let controlPlane: TestServer
    let verifier: TestServer

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({
        backend,
        clock,
        webhookPolicy: { allowPrivateAddresses: true },
        analytics: analytics.analytics(`usage-events-${storeKind}`),
      })
      verifier = await startTestVerifier({ backend, clock })
    })
    afterAll(async () => {
      await verifier?.close()
      await controlPlane?.close()
      await backend?.close()
    })

    const call = async (path: string, payload: object) => {
      const response = await controlPlane.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        payload,
      })
      expect(response.statusCode, response.body).toBe(200)
      return response.json()
    }
    const verify = async (key: string, times: number) => {
      for (let i = 0; i < times; i++) {
        const response = await verifier.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key } })
        expect(response.json().valid).toBe(true)
      }
    }

    it('sends each subject’s usage once per complete period, summed over each endpoint’s apis', async () => {
      const everything = await startWebhookReceiver()
      const scoped = await startWebhookReceiver()
      try {
        const [first, second] = [
          (await call('apis.createApi', { name: 'one' })).apiId,
          (await call('apis.createApi', { name: 'two' })).apiId,
        ]
        const externalId = `acme-${storeKind}`
        const [a, b, c] = [
          await call('keys.createKey', { apiId: first, externalId }),
          await call('keys.createKey', { apiId: first }),
          await call('keys.createKey', { apiId: second, externalId }),
        ]
        const unscoped = await call('webhooks.createEndpoint', {
          url: everything.url,
          eventTypes: ['usage.hourly', 'usage.daily'],
        })
        everything.useSecret(unscoped.secret)
        const narrow = await call('webhooks.createEndpoint', {
          url: scoped.url,
          eventTypes: ['usage.hourly'],
          apiIds: [second],
        })
        scoped.useSecret(narrow.secret)
        // The first pass with endpoints wanting usage: events from the periods in progress on.
        await ingestAnalytics(controlPlane, verifier)

        await verify(a.key, 3)
        await verify(b.key, 1)
        await verify(c.key, 2)
        await ingestAnalytics(controlPlane, verifier)
        // Not complete yet: nothing is sent.
        const usage = (await backend.store.webhooks.listEvents(0, 1_000)).filter((e) => e.type.startsWith('usage.'))
        expect(usage).toEqual([])
        clock.advance(2 * HOUR)
        await verify(a.key, 1)
        // To the real time, past the day: every pass sends up to a day of hours.
        clock.advance(Date.now() - clock.now())
        for (let pass = 0; pass < 4; pass++) await ingestAnalytics(controlPlane, verifier)

        const summary = (event: { type: string; data: Record<string, any> }) => [
          event.type,
          event.data.externalId ?? event.data.keyId,
          event.data.period.start - day,
          event.data.apiIds,
          event.data.verifications.valid,
          event.data.billable,
        ]
        // Both stores' suites share the file's engine: each looks at its own subjects' events.
        const ours = (receiver: typeof everything) =>
          receiver.events.filter((event) => [externalId, b.keyId].includes(event.data.externalId ?? event.data.keyId))
        // The clock moves with the real time meanwhile: each endpoint's lane lets its next delivery go by it.
        const following = setInterval(() => clock.advance(Math.max(0, Date.now() - clock.now())), 50)
        try {
          await waitFor(() => ours(everything).length === 5 || undefined, 'the five events of the unscoped endpoint')
          await waitFor(() => ours(scoped).length === 1 || undefined, 'the one event of the scoped endpoint')
        } finally {
          clearInterval(following)
        }
        const sorted = (events: typeof everything.events) =>
          events.map(summary).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
        expect(sorted(ours(everything))).toEqual(
          [
            ['usage.daily', externalId, 0, '*', 6, 6],
            ['usage.daily', b.keyId, 0, '*', 1, 1],
            ['usage.hourly', externalId, 0, '*', 5, 5],
            ['usage.hourly', externalId, 2 * HOUR, '*', 1, 1],
            ['usage.hourly', b.keyId, 0, '*', 1, 1],
          ].sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y))),
        )
        expect(ours(scoped).map(summary)).toEqual([['usage.hourly', externalId, 0, [second], 2, 2]])
        expect([...everything.events, ...scoped.events].every((event) => event.verified)).toBe(true)
        const hourly = ours(everything).find((event) => event.type === 'usage.hourly')!
        expect(hourly.data.period.end - hourly.data.period.start).toBe(HOUR)

        // Passes after: nothing sent again.
        for (let pass = 0; pass < 2; pass++) await ingestAnalytics(controlPlane, verifier)
        await new Promise((resolve) => setTimeout(resolve, 300))
        expect(ours(everything)).toHaveLength(5)
        expect(new Set(ours(everything).map((event) => event.id)).size).toBe(5)
        expect(ours(scoped)).toHaveLength(1)
      } finally {
        await everything.stop()
        await scoped.stop()
      }
    })

    it('holds the watermark back for a process that has not handed its rows over, until it is gone', async () => {
      const { analyticsBuffer } = backend.store
      const watermark = async () => (await analyticsBuffer.readMark(WATERMARK))!
      await ingestAnalytics(controlPlane, verifier)
      const before = await watermark()
      // A process that reported an hour ago, and recently: its rows up to then are all the ingest can vouch for.
      await analyticsBuffer.reportThrough(`stuck-${storeKind}`, clock.now() - HOUR, Date.now())
      clock.advance(10 * 60_000)
      await ingestAnalytics(controlPlane, verifier)
      expect(await watermark()).toBe(before)
      // Its last report older than GONE_AFTER_MS: taken as gone, forgotten, and the watermark moves on.
      await analyticsBuffer.reportThrough(`stuck-${storeKind}`, clock.now() - HOUR, Date.now() - GONE_AFTER_MS - 1)
      await ingestAnalytics(controlPlane, verifier)
      expect(await watermark()).toBeGreaterThan(before)
      expect((await analyticsBuffer.readReports()).has(`stuck-${storeKind}`)).toBe(false)
    })
  })
}

/**
 * UsageEvents over the file's engine, its rows inserted as the ingest inserts them, each test in an hour of its own
 * five days back (the stacks above use the last day): what a run queues for a period, on a store that fails half-way
 * through it, and the same sums however few rows a page holds.
 */
describe('usage events of a period', () => {
  const base = Math.floor(Date.now() / HOUR) * HOUR - 5 * DAY
  let made = 0
  const unique = (prefix: string) => `${prefix}_usage_events_${made++}`
  /** Inserts, at `time`, per row `n` verifications of a key (of an api, an identity or '') answered `outcome`. */
  const record = (time: number, rows: VerificationRows) => insertVerifications(analytics.engine, time, rows, unique)
  const endpoint = (apiIds: string[]): WebhookEndpoint => ({
    id: unique('whep'),
    url: 'https://hooks.example.com/usage',
    eventTypes: ['usage.hourly'],
    apiIds,
    enabled: true,
    secrets: [newWebhookSecret(base)],
    createdAt: base,
  })
  /**
   * A run's parts over `webhooks` (as `through` shows it), holding `endpoints` that want hourly usage, its marks from
   * `hour` on; the apis `billed` bill RATE_LIMITED too.
   */
  const usageEventsOf = async (
    hour: number,
    endpoints: WebhookEndpoint[],
    billed: string[],
    webhooks: MemoryWebhookStore,
    options: { through?: UsageEventsDeps['webhooks']; pageRows?: number } = {},
  ) => {
    const marks = usageEventMarks(new MemoryAnalyticsBufferStore())
    await marks.advancePeriod('usage.hourly', hour)
    for (const made of endpoints) await webhooks.createEndpoint(made)
    const events = new UsageEvents({
      engine: analytics.engine,
      clock: new ManualClock(hour + 2 * HOUR),
      webhooks: options.through ?? webhooks,
      marks,
      apiSettings: {
        of: async (apiId) => (billed.includes(apiId) ? { billableOutcomes: ['RATE_LIMITED', 'VALID'] } : {}),
      },
      log: pino({ level: 'silent' }),
      ...(options.pageRows === undefined ? {} : { pageRows: options.pageRows }),
    })
    return { events, marks }
  }
  /** Who, over which apis, and how much: an event as a line. */
  const line = (event: WebhookEvent) => {
    const data = event.data as unknown as UsageEventData
    const { verifications: v } = data
    return [
      data.externalId ?? data.keyId,
      data.apiIds,
      data.period.start,
      [v.valid, v.rateLimited, v.usageExceeded, v.total],
      data.billable,
      data.spentCredits,
    ]
  }
  const sorted = (lines: unknown[][]) => lines.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))

  it('queues each event once when the store fails half-way through a period, and sends that period again', async () => {
    const hour = base
    const [first, second] = [unique('api'), unique('api')]
    const [paying, searching, anonymous] = [unique('key'), unique('key'), unique('key')]
    const customer = unique('customer')
    await record(hour + 60_000, [
      [first, paying, customer, 'VALID', 2, 1],
      [first, paying, customer, 'RATE_LIMITED', 1],
      [second, searching, customer, 'VALID', 1],
      [second, searching, customer, 'RATE_LIMITED', 2],
      [first, anonymous, '', 'VALID', 1],
      [first, anonymous, '', 'USAGE_EXCEEDED', 1],
    ])
    const webhooks = new MemoryWebhookStore()
    const queued: string[] = []
    let fails = 1
    const failing: UsageEventsDeps['webhooks'] = {
      listEndpoints: () => webhooks.listEndpoints(),
      getEvent: (id) => webhooks.getEvent(id),
      enqueue: async (event, endpointIds, dueAt) => {
        // The store goes away after the first event of the period.
        if (queued.length === 1 && fails-- > 0) throw new Error('store unreachable')
        await webhooks.enqueue(event, endpointIds, dueAt)
        queued.push(event.id)
      },
    }
    // Two endpoints of every api (one event each, to both), one of the second api.
    const endpoints = [endpoint([]), endpoint([]), endpoint([second])]
    const { events, marks } = await usageEventsOf(hour, endpoints, [second], webhooks, { through: failing })
    await expect(events.run(hour + HOUR)).rejects.toThrow('store unreachable')
    // The period is still to send: its events are made again, the one queued already left out.
    expect(await marks.nextPeriod('usage.hourly')).toBe(hour)
    expect(await events.run(hour + HOUR)).toBe(2)
    expect(await marks.nextPeriod('usage.hourly')).toBe(hour + HOUR)
    expect(await events.run(hour + HOUR)).toBe(0)
    expect(new Set(queued).size).toBe(queued.length)
    const kept = await webhooks.listEvents(0, 100)
    expect(kept.map((event) => event.id).sort()).toEqual([...queued].sort())
    expect(sorted(kept.map(line))).toEqual(
      sorted([
        // Each api bills its own outcomes: the second api bills RATE_LIMITED too.
        [customer, '*', hour, [3, 3, 0, 6], 5, 2],
        [anonymous, '*', hour, [1, 0, 1, 2], 1, 0],
        [customer, [second], hour, [1, 2, 0, 3], 3, 0],
      ]),
    )
    const deliveries = await webhooks.claimDue(hour + 3 * HOUR, 60_000, 100)
    const to = (made: WebhookEndpoint) => deliveries.filter((d) => d.endpointId === made.id).map((d) => d.eventId)
    expect(to(endpoints[0]!)).toHaveLength(2)
    expect(to(endpoints[1]!).sort()).toEqual(to(endpoints[0]!).sort())
    expect(to(endpoints[2]!)).toHaveLength(1)
    expect(deliveries).toHaveLength(5)
  })

  it('sums a subject whose rows span pages as one page does', async () => {
    const hour = base + HOUR
    const [first, second] = [unique('api'), unique('api')]
    const customers = [unique('customer'), unique('customer')]
    const keys = [unique('key'), unique('key'), unique('key'), unique('key')]
    await record(hour + 60_000, [
      [first, keys[0]!, customers[0]!, 'VALID', 3, 2],
      [first, keys[0]!, customers[0]!, 'RATE_LIMITED', 1],
      [second, keys[1]!, customers[0]!, 'VALID', 2],
      [second, keys[1]!, customers[0]!, 'USAGE_EXCEEDED', 1],
      [second, keys[1]!, customers[0]!, 'RATE_LIMITED', 1],
      [first, keys[2]!, customers[1]!, 'VALID', 1],
      [second, keys[3]!, '', 'VALID', 2, 1],
      [second, keys[3]!, '', 'RATE_LIMITED', 1],
    ])
    const endpoints = [endpoint([]), endpoint([second])]
    const linesWith = async (pageRows?: number) => {
      const webhooks = new MemoryWebhookStore()
      const { events } = await usageEventsOf(hour, endpoints, [second], webhooks, { pageRows })
      await events.run(hour + HOUR)
      return sorted((await webhooks.listEvents(0, 100)).map(line))
    }
    const whole = await linesWith()
    expect(whole).toEqual(
      sorted([
        [customers[0], '*', hour, [5, 2, 1, 8], 6, 6],
        [customers[1], '*', hour, [1, 0, 0, 1], 1, 0],
        [keys[3], '*', hour, [2, 1, 0, 3], 3, 2],
        [customers[0], [second], hour, [2, 1, 1, 4], 3, 0],
        [keys[3], [second], hour, [2, 1, 0, 3], 3, 2],
      ]),
    )
    for (const pageRows of [1, 2, 3]) expect(await linesWith(pageRows), `${pageRows} rows a page`).toEqual(whole)
  })
})

/**
 * A verification that waits on the store (its credits) after it was decided: its row is recorded when the wait is over,
 * at the time it was decided, maybe past a period's end and a hand-over. Its period's events wait for it.
 */
describe('usage events and a verification still deciding', () => {
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR
  const clock = new ManualClock(hour + HOUR - 60_000)
  let backend: Backend
  let controlPlane: TestServer
  let verifier: TestServer

  beforeAll(async () => {
    backend = await openBackend()
    controlPlane = await startTestControlPlane({
      backend,
      clock,
      webhookPolicy: { allowPrivateAddresses: true },
      analytics: analytics.analytics('usage-events-deciding'),
    })
    verifier = await startTestVerifier({ backend, clock })
  })
  afterAll(async () => {
    await verifier?.close()
    await controlPlane?.close()
    await backend?.close()
  })

  const call = async (path: string, payload: object) => {
    const response = await controlPlane.app.inject({
      method: 'POST',
      url: `/v1/${path}`,
      headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
      payload,
    })
    expect(response.statusCode, response.body).toBe(200)
    return response.json()
  }
  const verify = (key: string) =>
    verifier.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key } }).then((r) => r.json())

  it('counts it in the period it was decided in, however long the store took', async () => {
    const { apiId } = await call('apis.createApi', { name: 'deciding' })
    const { key, keyId } = await call('keys.createKey', { apiId, remaining: 100 })
    // Nobody listens there: the events are read from the store.
    await call('webhooks.createEndpoint', { url: 'http://127.0.0.1:9/usage', eventTypes: ['usage.hourly'] })
    await ingestAnalytics(controlPlane, verifier)
    expect((await verify(key)).valid).toBe(true)

    // The next verification's credits wait on the store until the hour is over and its rows handed over.
    const { keys } = backend.store
    const spend = keys.spendCredits.bind(keys)
    let entered!: () => void
    const waiting = new Promise<void>((resolve) => (entered = resolve))
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    keys.spendCredits = async (...args) => {
      entered()
      await released
      return spend(...args)
    }
    const deciding = verify(key)
    await waiting
    clock.advance(2 * 60_000)
    await ingestAnalytics(controlPlane, verifier)
    release()
    expect((await deciding).valid).toBe(true)
    keys.spendCredits = spend
    await ingestAnalytics(controlPlane, verifier)

    const sent = (await backend.store.webhooks.listEvents(0, 1_000)).filter(
      (event) => event.type === 'usage.hourly' && event.data.keyId === keyId,
    )
    expect(
      sent.map((event) => [(event.data as unknown as UsageEventData).period.start, event.data.verifications]),
    ).toEqual([[hour, expect.objectContaining({ valid: 2, total: 2 })]])
  })
})
