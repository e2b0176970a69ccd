import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EndpointSender } from '../../control-plane/webhooks/delivery/endpoint-sender.js'
import { eventId } from '../../control-plane/webhooks/events/change-events.js'
import {
  answerWithout,
  meterAnswer,
  meterRequest,
  type MeterReading,
  type MeterTarget,
} from '../../control-plane/webhooks/exports/meter-requests.js'
import type { MeterProvider } from '../../shared/meter-export.js'
import { startLagoServer, startOpenMeterServer, startStripeServer, type MeterServer } from '../support/meter-servers.js'

const HOUR = 3_600_000
const CREDENTIALS: Record<MeterProvider, string> = {
  stripe: 'sk_test_keygate',
  lago: 'lago_api_key',
  openmeter: 'om_token',
}
const CUSTOMERS: Record<MeterProvider, string> = {
  stripe: 'cus_NciAYcXfLnqBoz',
  lago: 'sub_acme_2026',
  openmeter: 'acme',
}

/**
 * Each provider's request for a period's usage, sent by the webhooks' own sender to a local server that checks it as
 * the provider documents it: taken once, the same again taken as a duplicate (delivered, not counted twice), and
 * refusals and outages told apart.
 */
describe('meter requests to each provider', () => {
  const servers = {} as Record<MeterProvider, MeterServer>
  const sender = new EndpointSender({ allowPrivateAddresses: true, timeoutMs: 5_000 })
  beforeAll(async () => {
    servers.stripe = await startStripeServer({ secretKey: CREDENTIALS.stripe, meters: ['api_calls'] })
    servers.lago = await startLagoServer({ apiKey: CREDENTIALS.lago, codes: ['api_calls'] })
    servers.openmeter = await startOpenMeterServer({ token: CREDENTIALS.openmeter, types: ['api_calls'] })
  })
  afterAll(async () => {
    await sender.close()
    for (const server of Object.values(servers)) await server?.stop()
  })

  let made = 0
  const reading = (provider: MeterProvider, extra: Partial<MeterReading> = {}): MeterReading => ({
    id: eventId(`usage.hourly|meter-requests|${made++}`),
    customer: CUSTOMERS[provider],
    value: 42,
    periodStart: Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR,
    apiIds: ['api_1'],
    ...extra,
  })
  const target = (provider: MeterProvider, extra: Partial<MeterTarget> = {}): MeterTarget => ({
    provider,
    baseUrl: servers[provider].url,
    meter: 'api_calls',
    credential: CREDENTIALS[provider],
    ...extra,
  })
  const send = async (to: MeterTarget, sent: MeterReading) => {
    const { url, headers, body } = meterRequest(to, sent)
    const answer = await sender.send(url, headers, body)
    return { meaning: meterAnswer(to.provider, answer), answer }
  }

  for (const provider of ['stripe', 'lago', 'openmeter'] as const) {
    it(`${provider}: takes a period once, however often it is sent`, async () => {
      const server = servers[provider]
      const sent = reading(provider)
      const before = server.accepted.length
      for (let i = 0; i < 3; i++) expect((await send(target(provider), sent)).meaning).toBe('delivered')
      expect(server.accepted.slice(before)).toEqual([
        { id: sent.id, customer: sent.customer, meter: 'api_calls', value: 42, time: sent.periodStart / 1000 },
      ])
    })

    it(`${provider}: a wrong credential is refused, an outage retried`, async () => {
      const server = servers[provider]
      const before = server.accepted.length
      expect((await send(target(provider, { credential: 'wrong' }), reading(provider))).meaning).toBe('refused')
      server.failing = true
      try {
        expect((await send(target(provider), reading(provider))).meaning).toBe('retry')
      } finally {
        server.failing = false
      }
      expect(server.accepted.length).toBe(before)
    })
  }

  it('stripe: the same period sent again carries its Idempotency-Key, and is answered what was answered first', async () => {
    const sent = reading('stripe')
    const { url, headers, body } = meterRequest(target('stripe'), sent)
    const first = await sender.send(url, headers, body)
    const again = await sender.send(url, headers, body)
    expect(first.status).toBe(200)
    // Stripe's transport layer: the saved answer, not the business layer's "already exists".
    expect([again.status, again.snippet]).toEqual([200, first.snippet])
    expect(new URLSearchParams(body).get('identifier')).toBe(headers['idempotency-key'])
  })

  it('stripe: the same period sent under another Idempotency-Key is answered a duplicate, and delivered', async () => {
    const sent = reading('stripe')
    const { url, headers, body } = meterRequest(target('stripe'), sent)
    expect((await send(target('stripe'), sent)).meaning).toBe('delivered')
    const again = await sender.send(url, { ...headers, 'idempotency-key': 'another' }, body)
    expect(again.status).toBe(400)
    expect(again.snippet).toContain(`An event already exists with identifier ${sent.id}.`)
    expect(meterAnswer('stripe', again)).toBe('delivered')
    expect(servers.stripe.accepted.filter((taken) => taken.id === sent.id)).toHaveLength(1)
  })

  it('stripe: refuses a period over 35 days old and a meter it does not have', async () => {
    const old = reading('stripe', { periodStart: Date.now() - 36 * 24 * HOUR })
    expect((await send(target('stripe'), old)).meaning).toBe('refused')
    expect((await send(target('stripe', { meter: 'nope' }), reading('stripe'))).meaning).toBe('refused')
  })

  it('lago: the same transaction_id again is its 422 value_already_exist, delivered', async () => {
    const sent = reading('lago')
    expect((await send(target('lago'), sent)).meaning).toBe('delivered')
    const again = await send(target('lago'), sent)
    expect(again.answer.status).toBe(422)
    expect(again.meaning).toBe('delivered')
    // Another 422 (a field missing) is a refusal.
    expect((await send(target('lago'), { ...reading('lago'), customer: '' })).meaning).toBe('refused')
  })

  it('keeps the credential out of an answer that says it back, whole or cut off at the end of the snippet', () => {
    const credential = 'sk_live_0123456789abcdef'
    const echoed = { status: 401, latencyMs: 3, snippet: `{"error":"Invalid API Key provided: Bearer ${credential}"}` }
    expect(answerWithout(echoed, credential)).toEqual({
      ...echoed,
      snippet: '{"error":"Invalid API Key provided: Bearer [credential]"}',
    })
    const cut = { latencyMs: 3, snippet: `x ${credential} y Bearer ${credential.slice(0, 12)}` }
    expect(answerWithout(cut, credential).snippet).toBe('x [credential] y Bearer [credential]')
    // A few characters that merely look like its start are left as they are.
    expect(answerWithout({ latencyMs: 1, snippet: 'ends in sk_' } as const, credential).snippet).toBe('ends in sk_')
    const bare: { latencyMs: number; snippet?: string } = { latencyMs: 1 }
    expect(answerWithout(bare, credential)).toEqual({ latencyMs: 1 })
  })

  it('tells answers apart: 2xx delivered; 408, 409, 429, 5xx and no answer retried; other 4xx refused', () => {
    for (const provider of ['stripe', 'lago', 'openmeter'] as const) {
      expect(meterAnswer(provider, { status: 200 })).toBe('delivered')
      expect(meterAnswer(provider, { status: 204 })).toBe('delivered')
      for (const status of [408, 409, 429, 500, 503]) expect(meterAnswer(provider, { status })).toBe('retry')
      expect(meterAnswer(provider, {})).toBe('retry')
      for (const status of [400, 401, 403, 404, 422]) expect(meterAnswer(provider, { status })).toBe('refused')
    }
    // A duplicate's words from the other provider mean nothing.
    expect(meterAnswer('lago', { status: 400, snippet: 'An event already exists with identifier x.' })).toBe('refused')
  })
})
