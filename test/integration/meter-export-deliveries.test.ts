import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventId } from '../../control-plane/webhooks/events/change-events.js'
import type { UsageEventData } from '../../control-plane/webhooks/usage/usage-events.js'
import type { SealingKey } from '../../shared/secrets/secret-box.js'
import type { WebhookEvent } from '../../shared/webhook.js'
import { capturedLogger, openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend } from '../support/apps.js'
import { startStripeServer, type MeterServer } from '../support/meter-servers.js'
import { waitFor } from '../support/wait-for.js'

const HOUR = 3_600_000
const OLD: SealingKey = { id: 'old', key: randomBytes(32) }
const NEW: SealingKey = { id: 'new', key: randomBytes(32) }

/**
 * A meter export's deliveries where they could go wrong: its credential (a URL changed without it, a new one given,
 * the answers and log lines of the requests it goes in, the keys sealing it rotated) and the hours it must not send.
 * The control plane's own worker sends hourly usage events put in its store (their making is usage-events' and
 * meter-exports.test.ts's).
 */
describe("a meter export's deliveries", () => {
  const { log, lines } = capturedLogger()
  let backend: Backend
  let stripe: MeterServer
  let other: MeterServer
  let echo: { url: string; stop(): Promise<void> }
  let apiId: string
  const customer = 'credentials-acme'

  beforeAll(async () => {
    stripe = await startStripeServer({ secretKey: 'sk_test_credentials', meters: ['api_calls'] })
    other = await startStripeServer({ secretKey: 'sk_test_other_account', meters: ['api_calls'] })
    echo = await startEchoServer()
    backend = await openBackend()
    await withControlPlane([OLD], async (send) => {
      apiId = (await send('apis.createApi', { name: 'credentials' })).json().apiId
      await send('identities.createIdentity', { externalId: customer, meta: { stripeCustomerId: 'cus_credentials' } })
    })
  })
  afterAll(async () => {
    await backend?.close()
    for (const server of [stripe, other, echo]) await server?.stop()
  })

  /** What an injected call answered, as the tests read it. */
  interface Answered {
    statusCode: number
    body: string
    json(): any
  }

  /** Runs `body` with a control plane on the test's store sealing with `keys`, closed after. */
  async function withControlPlane(
    keys: SealingKey[],
    body: (send: (path: string, payload?: object) => Promise<Answered>) => Promise<void>,
  ) {
    const controlPlane = await startTestControlPlane({
      backend,
      log,
      sealingKeys: keys,
      webhookPolicy: { allowPrivateAddresses: true },
    })
    try {
      await body(async (path, payload) =>
        controlPlane.app.inject({
          method: payload === undefined ? 'GET' : 'POST',
          url: `/v1/${path}`,
          headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
          ...(payload === undefined ? {} : { payload }),
        }),
      )
    } finally {
      await controlPlane.close()
    }
  }

  let hours = 0
  /**
   * An hour's usage event of the customer (or of a key without an identity, `keyId`), made now unless `madeAt` says
   * when, queued to `endpointId`: each call a new hour, unless `start` says which. Its start, Unix seconds.
   */
  async function queueHour(
    endpointId: string,
    { start = nextHour(), billable = 4, madeAt = Date.now(), keyId = undefined as string | undefined } = {},
  ): Promise<number> {
    const data: UsageEventData = {
      ...(keyId === undefined ? { externalId: customer } : { keyId }),
      period: { start, end: start + HOUR },
      apiIds: [apiId],
      verifications: {
        valid: billable,
        rateLimited: 2,
        usageExceeded: 0,
        disabled: 0,
        expired: 0,
        forbidden: 0,
        insufficientPermissions: 0,
        notFound: 0,
        total: billable + 2,
      },
      billable,
      spentCredits: 0,
    }
    const event: WebhookEvent = {
      id: eventId(
        `usage.hourly|${keyId === undefined ? customer : ''}|${keyId ?? ''}|${start}|${JSON.stringify([apiId])}`,
      ),
      type: 'usage.hourly',
      at: start + HOUR,
      madeAt,
      data: data as unknown as Record<string, unknown>,
    }
    await backend.store.webhooks.enqueue(event, [endpointId], Date.now())
    return start / 1000
  }
  const nextHour = () => (Math.floor(Date.now() / HOUR) - 1 - hours++) * HOUR
  /** Every queued delivery done with (sent, completed unsent or dead-lettered). */
  const settled = () =>
    waitFor(async () => ((await backend.store.webhooks.queueDepth()) === 0 ? true : undefined), 'the queue empty')
  const attemptsOf = async (endpointId: string) => backend.store.webhooks.listAttempts(endpointId, 100)
  const exportTo = (url: string, credential: string) => ({
    url,
    apiIds: [apiId],
    export: { provider: 'stripe', meter: 'api_calls', customerField: 'stripeCustomerId', credential },
  })

  it('goes to a new URL only given anew, and a new one is what is sent from then on', async () => {
    await withControlPlane([OLD], async (send) => {
      const created = await send('webhooks.createEndpoint', exportTo(stripe.url, 'sk_test_credentials'))
      expect(created.statusCode, created.body).toBe(200)
      const { endpointId } = created.json()
      // Pointed elsewhere with the credential it has, it would carry that to whoever is there.
      const moved = await send('webhooks.updateEndpoint', { endpointId, url: other.url })
      expect(moved.statusCode, moved.body).toBe(400)
      expect(moved.body).toContain('export.credential')
      const given = await send('webhooks.updateEndpoint', {
        endpointId,
        url: other.url,
        export: { credential: 'sk_test_other_account' },
      })
      expect(given.statusCode, given.body).toBe(200)
      const time = await queueHour(endpointId)
      await waitFor(() => other.accepted.find((taken) => taken.time === time), 'the hour at the new account')
      expect(stripe.accepted).toEqual([])
    })
  })

  it('never shows in the delivery log, nor in a log line, even when an answer repeats it', async () => {
    const credential = 'sk_test_echoed_back'
    await withControlPlane([OLD], async (send) => {
      const { endpointId } = (await send('webhooks.createEndpoint', exportTo(echo.url, credential))).json()
      await queueHour(endpointId)
      const [attempt] = await waitFor(async () => {
        const attempts = await attemptsOf(endpointId)
        return attempts.length > 0 ? attempts : undefined
      }, 'the attempt')
      // The echo server's answer said the Authorization header back: kept, but not the credential in it.
      expect(attempt).toMatchObject({ status: 401, outcome: 'dead' })
      expect(attempt!.responseSnippet).toContain('Bearer')
      const shown = (await send(`webhooks.listAttempts?endpointId=${endpointId}`)).body
      expect(shown).toContain('Bearer')
      for (const text of [JSON.stringify(attempt), shown, ...lines]) expect(text).not.toContain(credential)
    })
  })

  it('opens after a rotation while its old key is listed, and is held for an operator once it is not', async () => {
    let endpointId = ''
    await withControlPlane([OLD], async (send) => {
      endpointId = (await send('webhooks.createEndpoint', exportTo(stripe.url, 'sk_test_credentials'))).json()
        .endpointId
    })
    await withControlPlane([NEW, OLD], async () => {
      const time = await queueHour(endpointId)
      await waitFor(() => stripe.accepted.find((taken) => taken.time === time), 'the hour, the old key listed')
    })
    const answered = stripe.answered.length
    await withControlPlane([NEW], async () => {
      await queueHour(endpointId)
      await waitFor(
        async () => ((await backend.store.webhooks.listDead(endpointId, 100)).length === 1 ? true : undefined),
        'the held hour',
      )
    })
    expect(stripe.answered.length).toBe(answered)
    const [held] = await attemptsOf(endpointId)
    expect(held).toMatchObject({ outcome: 'dead', attempt: 1 })
    expect(held!.error).toContain('sealed with a key that is not configured (ENCRYPTION_KEYS)')
  })
  it('holds an hour further back than Stripe takes usage, and completes unsent one with nothing or no one to bill', async () => {
    await withControlPlane([OLD], async (send) => {
      const { endpointId } = (await send('webhooks.createEndpoint', exportTo(stripe.url, 'sk_test_credentials'))).json()
      const answered = stripe.answered.length
      // Made now (a control plane back after weeks catching up), of an hour 36 days back.
      await queueHour(endpointId, { start: nextHour() - 36 * 24 * HOUR })
      await queueHour(endpointId, { billable: 0 })
      // Never to be sent, however old: completed, not a dead letter asking about the provider.
      const dayAgo = Date.now() - 24 * HOUR
      await queueHour(endpointId, { billable: 0, madeAt: dayAgo })
      await queueHour(endpointId, { keyId: 'key_without_identity', madeAt: dayAgo })
      await settled()
      expect(stripe.answered.length).toBe(answered)
      const attempts = await attemptsOf(endpointId)
      expect(attempts).toHaveLength(1)
      expect(attempts[0]).toMatchObject({ outcome: 'dead', attempt: 1 })
      expect(attempts[0]!.error).toContain('further back than stripe takes usage (35 days)')
      expect(await backend.store.webhooks.listDead(endpointId, 100)).toHaveLength(1)
    })
  })
})

/** A server that answers every request 401, saying back the Authorization header it was sent (as some do). */
async function startEchoServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      response
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: `Invalid API Key provided: ${request.headers.authorization ?? ''}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  }
}
