import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GONE_AFTER_MS, WATERMARK } from '../../control-plane/analytics/ingest/analytics-ingest.js'
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
