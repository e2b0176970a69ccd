import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MeterProvider } from '../../shared/meter-export.js'
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
import { startLagoServer, startOpenMeterServer, startStripeServer, type MeterServer } from '../support/meter-servers.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
const redis = useRedisServer()
const analytics = useAnalyticsEngine()
const CREDENTIALS: Record<MeterProvider, string> = {
  stripe: 'sk_test_meter_exports_secret',
  lago: 'lago_meter_exports_secret',
  openmeter: 'om_meter_exports_secret',
}

/**
 * Meter exports on both stores, end to end: verifications through a verifier, ingested, each complete hour's usage
 * sent by the control plane's own worker to local servers that check each provider's documented request and
 * deduplicate as it does. The clock starts an hour into a UTC day at least a day back (so that hours complete), then
 * follows the real time while deliveries go out.
 */
for (const storeKind of ['memory', 'redis'] as const) {
  describe(`meter exports on the ${storeKind} store`, () => {
    const day = Math.floor((Date.now() - 25 * HOUR) / DAY) * DAY
    const clock = new ManualClock(day + HOUR + 5 * 60_000)
    const servers = {} as Record<MeterProvider, MeterServer>
    let backend: Backend
    let controlPlane: TestServer
    let verifier: TestServer

    beforeAll(async () => {
      servers.stripe = await startStripeServer({
        secretKey: CREDENTIALS.stripe,
        meters: ['api_calls', 'api_calls_eu'],
        now: () => clock.now(),
      })
      servers.lago = await startLagoServer({ apiKey: CREDENTIALS.lago, codes: ['api_calls', 'api_calls_eu'] })
      servers.openmeter = await startOpenMeterServer({
        token: CREDENTIALS.openmeter,
        types: ['api_calls', 'api_calls_eu'],
      })
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({
        backend,
        clock,
        webhookPolicy: { allowPrivateAddresses: true },
        analytics: analytics.analytics(`meter-exports-${storeKind}`),
      })
      verifier = await startTestVerifier({ backend, clock })
    })
    afterAll(async () => {
      await verifier?.close()
      await controlPlane?.close()
      await backend?.close()
      for (const server of Object.values(servers)) await server?.stop()
    })

    const send = (method: 'GET' | 'POST', path: string, payload?: object) =>
      controlPlane.app.inject({
        method,
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
        ...(payload === undefined ? {} : { payload }),
      })
    const call = async (path: string, payload: object) => {
      const response = await send('POST', path, payload)
      expect(response.statusCode, response.body).toBe(200)
      return response.json()
    }
    const verify = async (key: string, times: number) => {
      for (let i = 0; i < times; i++) {
        const response = await verifier.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', payload: { key } })
        expect(response.json().valid).toBe(true)
      }
    }
    /**
     * Runs `body` with the clock moving as the real time does (caught up with it first, when behind): each endpoint's
     * lane lets its next delivery go by it.
     */
    const following = async (body: () => Promise<unknown>) => {
      clock.advance(Math.max(0, Date.now() - clock.now()))
      const timer = setInterval(() => clock.advance(50), 50)
      try {
        await body()
      } finally {
        clearInterval(timer)
      }
    }
    const dead = async (endpointId: string) => (await backend.store.webhooks.listDead(endpointId, 100)).length

    it("sends each complete hour's usage per customer to Stripe, Lago and OpenMeter, once", async () => {
      const { apiId } = await call('apis.createApi', { name: `metered-${storeKind}` })
      const customer = `acme-exports-${storeKind}`
      const unnamed = `nometa-exports-${storeKind}`
      await call('identities.createIdentity', {
        externalId: customer,
        meta: { stripeCustomerId: 'cus_acme', lagoSubscription: 'sub_acme' },
      })
      const [a, b, c] = [
        await call('keys.createKey', { apiId, externalId: customer }),
        await call('keys.createKey', { apiId }),
        await call('keys.createKey', { apiId, externalId: unnamed }),
      ]
      const made = {} as Record<MeterProvider, string>
      for (const [provider, customerField] of [
        ['stripe', 'stripeCustomerId'],
        ['lago', 'lagoSubscription'],
        ['openmeter', undefined],
      ] as const) {
        made[provider] = (
          await call('webhooks.createEndpoint', {
            url: servers[provider].url,
            apiIds: [apiId],
            export: {
              provider,
              meter: 'api_calls',
              ...(customerField ? { customerField } : {}),
              credential: CREDENTIALS[provider],
            },
          })
        ).endpointId
      }
      // Shown without its credential, which the store keeps sealed only.
      const shown = (await send('GET', `webhooks.getEndpoint?endpointId=${made.stripe}`)).json()
      expect(shown).toMatchObject({
        eventTypes: ['usage.hourly'],
        apiIds: [apiId],
        export: { provider: 'stripe', meter: 'api_calls', measure: 'billable', customerField: 'stripeCustomerId' },
      })
      const stored = JSON.stringify(await backend.store.webhooks.listEndpoints())
      for (const credential of Object.values(CREDENTIALS)) expect(stored).not.toContain(credential)
      const audited = JSON.stringify((await send('GET', 'audit.list?limit=100')).json())
      // Nor sealed: what a call answers or the audit log keeps is no copy of it to open elsewhere.
      for (const credential of [...Object.values(CREDENTIALS), 'kgs1.'])
        for (const text of [JSON.stringify(shown), audited]) expect(text).not.toContain(credential)

      // The first pass with an endpoint wanting hourly usage: events from the hour in progress on.
      await ingestAnalytics(controlPlane, verifier)
      await verify(a.key, 3)
      await verify(b.key, 1)
      await verify(c.key, 2)
      await ingestAnalytics(controlPlane, verifier)
      clock.advance(Date.now() - clock.now())
      for (let pass = 0; pass < 3; pass++) await ingestAnalytics(controlPlane, verifier)
      const hour = day + HOUR
      const ours = (provider: MeterProvider) =>
        servers[provider].accepted.filter((taken) => taken.time === hour / 1000 && taken.meter === 'api_calls')
      await following(async () => {
        await waitFor(() => (ours('stripe').length === 1 ? true : undefined), 'the hour at Stripe')
        await waitFor(() => (ours('lago').length === 1 ? true : undefined), 'the hour at Lago')
        await waitFor(() => (ours('openmeter').length === 2 ? true : undefined), 'both customers at OpenMeter')
        // The identity that names no Stripe customer nor Lago subscription: held for an operator at each.
        await waitFor(async () => ((await dead(made.stripe)) === 1 ? true : undefined), "Stripe's dead letter")
        await waitFor(async () => ((await dead(made.lago)) === 1 ? true : undefined), "Lago's dead letter")
      })
      const line = ({ customer, value }: { customer: string; value: number }) => [customer, value]
      expect(ours('stripe').map(line)).toEqual([['cus_acme', 3]])
      expect(ours('lago').map(line)).toEqual([['sub_acme', 3]])
      expect(ours('openmeter').map(line).sort()).toEqual([
        [customer, 3],
        [unnamed, 2],
      ])
      const attempts = (await send('GET', `webhooks.listAttempts?endpointId=${made.stripe}`)).json()
      expect(JSON.stringify(attempts)).toContain(`has no meta field \\"stripeCustomerId\\"`)

      // Replayed, within every window: sent again, taken once.
      const before = Object.values(servers).map((server) => server.answered.length)
      for (const provider of ['stripe', 'lago', 'openmeter'] as const)
        await call('webhooks.replay', { endpointId: made[provider], since: 0 })
      await following(() =>
        waitFor(
          () => (Object.values(servers).every((server, i) => server.answered.length > before[i]!) ? true : undefined),
          'the replays answered',
        ),
      )
      expect(ours('stripe')).toHaveLength(1)
      expect(ours('lago')).toHaveLength(1)
      expect(ours('openmeter')).toHaveLength(2)

      // A day later, past Stripe's window: a replay is held, never sent; Lago's duplicate is still its 422.
      clock.advance(DAY)
      const stripeAnswers = servers.stripe.answered.length
      const lagoAnswers = servers.lago.answered.length
      // Each customer's hour and the key without an identity's (skipped: no customer to bill).
      expect(await call('webhooks.replay', { endpointId: made.stripe, since: 0 })).toEqual({ queued: 3 })
      expect(await call('webhooks.replay', { endpointId: made.lago, since: 0 })).toEqual({ queued: 3 })
      await following(async () => {
        await waitFor(async () => ((await dead(made.stripe)) >= 2 ? true : undefined), 'the held Stripe replay')
        await waitFor(() => (servers.lago.answered.length > lagoAnswers ? true : undefined), "Lago's answer")
      })
      expect(servers.stripe.answered.length).toBe(stripeAnswers)
      expect(JSON.stringify((await send('GET', `webhooks.listAttempts?endpointId=${made.stripe}`)).json())).toContain(
        "past stripe's deduplication window",
      )
      expect(ours('lago')).toHaveLength(1)
    })

    it('sends the hour to each of two exports of the same apis at one provider account, each its own', async () => {
      const { apiId } = await call('apis.createApi', { name: `two-meters-${storeKind}` })
      const customer = `two-meters-${storeKind}`
      await call('identities.createIdentity', {
        externalId: customer,
        meta: { stripeCustomerId: 'cus_two', lagoSubscription: 'sub_two' },
      })
      const { key } = await call('keys.createKey', { apiId, externalId: customer })
      clock.advance(Math.max(0, Date.now() - clock.now()))
      const customerFields = { stripe: 'stripeCustomerId', lago: 'lagoSubscription', openmeter: undefined }
      for (const provider of ['stripe', 'lago', 'openmeter'] as const)
        for (const meter of ['api_calls', 'api_calls_eu'])
          await call('webhooks.createEndpoint', {
            url: servers[provider].url,
            apiIds: [apiId],
            export: {
              provider,
              meter,
              ...(customerFields[provider] ? { customerField: customerFields[provider] } : {}),
              credential: CREDENTIALS[provider],
            },
          })
      await ingestAnalytics(controlPlane, verifier)
      const hour = Math.floor(clock.now() / HOUR) * HOUR
      await verify(key, 2)
      await ingestAnalytics(controlPlane, verifier)
      clock.advance(HOUR)
      for (let pass = 0; pass < 2; pass++) await ingestAnalytics(controlPlane, verifier)
      // The same event goes to both: each export's request is its own at the provider, not a duplicate of the other's.
      const meters = (provider: MeterProvider) =>
        servers[provider].accepted
          .filter((taken) => taken.time === hour / 1000 && ['cus_two', 'sub_two', customer].includes(taken.customer))
          .map((taken) => `${taken.meter}=${taken.value}`)
          .sort()
      await following(async () => {
        for (const provider of ['stripe', 'lago', 'openmeter'] as const)
          await waitFor(() => (meters(provider).length === 2 ? true : undefined), `both meters at ${provider}`)
      })
      for (const provider of ['stripe', 'lago', 'openmeter'] as const)
        expect(meters(provider)).toEqual(['api_calls=2', 'api_calls_eu=2'])
    })

    it('refuses an export without apis, with other event types, or without its customer field, and a test send', async () => {
      const { apiId } = await call('apis.createApi', { name: `refused-${storeKind}` })
      const base = { provider: 'stripe', meter: 'api_calls', customerField: 'stripeCustomerId', credential: 'sk_x' }
      for (const body of [
        { url: servers.stripe.url, export: base },
        { url: servers.stripe.url, apiIds: [apiId], eventTypes: ['key.created'], export: base },
        { url: servers.stripe.url, apiIds: [apiId], export: { ...base, customerField: undefined } },
        { url: servers.stripe.url, apiIds: [apiId], export: { ...base, provider: 'paddle' } },
      ]) {
        const refused = await send('POST', 'webhooks.createEndpoint', body)
        expect(refused.statusCode, refused.body).toBe(400)
      }
      const { endpointId } = await call('webhooks.createEndpoint', {
        url: servers.stripe.url,
        apiIds: [apiId],
        export: base,
      })
      expect((await send('POST', 'webhooks.sendTest', { endpointId })).statusCode).toBe(400)
      expect(
        (await send('POST', 'webhooks.updateEndpoint', { endpointId, eventTypes: ['usage.daily'] })).statusCode,
      ).toBe(400)
      const { apiId: other } = await call('apis.createApi', { name: `other-${storeKind}` })
      const rescoped = await send('POST', 'webhooks.updateEndpoint', { endpointId, apiIds: [apiId, other] })
      expect(rescoped.statusCode, rescoped.body).toBe(400)
      expect(rescoped.body).toContain("a meter export's apis are fixed")
      // The same apis named again change nothing.
      await call('webhooks.updateEndpoint', { endpointId, apiIds: [apiId] })
      await call('webhooks.updateEndpoint', { endpointId, export: { meter: 'other', credential: 'sk_y' } })
      expect((await send('GET', `webhooks.getEndpoint?endpointId=${endpointId}`)).json().export.meter).toBe('other')
      expect(JSON.stringify(await backend.store.webhooks.listEndpoints())).not.toContain('sk_y')
    })
  })
}

describe('meter exports without ENCRYPTION_KEYS', () => {
  it('are refused (412): there is nothing to seal their credential with', async () => {
    const controlPlane = await startTestControlPlane({
      sealingKeys: null,
      webhookPolicy: { allowPrivateAddresses: true },
    })
    try {
      const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
      const created = await controlPlane.app.inject({
        method: 'POST',
        url: '/v1/apis.createApi',
        headers,
        payload: { name: 'unsealed' },
      })
      expect(created.statusCode, created.body).toBe(200)
      const { apiId } = created.json<{ apiId: string }>()
      const refused = await controlPlane.app.inject({
        method: 'POST',
        url: '/v1/webhooks.createEndpoint',
        headers,
        payload: {
          url: 'http://127.0.0.1:9/',
          apiIds: [apiId],
          export: { provider: 'openmeter', meter: 'api_calls', credential: 'om_x' },
        },
      })
      expect(refused.statusCode, refused.body).toBe(412)
      expect(refused.body).toContain('ENCRYPTION_KEYS')
    } finally {
      await controlPlane.close()
    }
  })
})
