import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useClickhouseServer } from '../support/clickhouse-server.js'
import { runKeygate, startKeygate, type KeygateProcess } from '../support/processes.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'

const HOUR = 3_600_000
const SHIFTED_CLOCK = fileURLToPath(new URL('../support/shifted-clock.mjs', import.meta.url))
/** How long before the hour's end the processes start: room for their start and the hour's verifications. */
const LEAD_MS = 150_000
/** How far into the next hour the ingesting control plane is killed, at the soonest: past two hand-overs. */
const KILLED_AFTER_END_MS = 5_000

interface Received {
  id: string
  type: string
  data: Record<string, any>
  signed: boolean
}

/**
 * Takes every delivery (204) and checks its signature with the endpoint's secret at the timestamp it names: the
 * processes' clock is shifted, so the libraries' check against this machine's clock (5 minutes either way) does not
 * apply here (test/support/webhook-receiver.ts checks it where clocks agree).
 */
async function startAcceptingReceiver(): Promise<{
  url: string
  events: Received[]
  secret: string
  stop(): Promise<void>
}> {
  const state = { url: '', events: [] as Received[], secret: '', stop: async () => {} }
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const id = String(request.headers['webhook-id'])
      const at = new Date(Number(request.headers['webhook-timestamp']) * 1000)
      const expected = new Webhook(state.secret).sign(id, at, body)
      const signed = String(request.headers['webhook-signature']).split(' ').includes(expected)
      const payload = JSON.parse(body) as { type: string; data: Record<string, any> }
      state.events.push({ id, type: payload.type, data: payload.data, signed })
      response.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`
  state.stop = async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  return state
}

/**
 * Usage for billing through the processes users run, across a control plane's death: two control planes on one
 * ClickHouse server (the HTTP stand-in: test/support/clickhouse-server.ts) and two verifiers on one Redis, their clock
 * shifted (test/support/shifted-clock.mjs) to start shortly before an hour ends. A customer's verifications on both
 * verifiers in the hour; the control plane holding the ingest's lease SIGKILLed a few seconds into the next, before
 * the hour can be complete, while the verifiers go on answering: the other control plane takes the ingest over, and
 * the hour's usage.hourly arrives once, every verification counted once. (A death between queueing an hour's events
 * and noting it is covered by usage-events.test.ts, on a store failing half-way.)
 */
describe("end to end: a customer's hour billed once across two verifiers and a control plane's death", () => {
  const redis = useRedisServer()
  const clickhouse = useClickhouseServer({ password: 'e2e-failover-pw-7c2d' })
  let receiver: Awaited<ReturnType<typeof startAcceptingReceiver>>
  const planes: KeygateProcess[] = []
  const verifiers: KeygateProcess[] = []
  let rootKey = ''
  let hourEnd = 0
  let shift = 0
  /** The processes' time. */
  const processNow = () => Date.now() + shift

  beforeAll(async () => {
    receiver = await startAcceptingReceiver()
    const now = Date.now()
    hourEnd = Math.ceil((now + LEAD_MS) / HOUR) * HOUR
    shift = hourEnd - LEAD_MS - now
    const env = {
      REDIS_URL: redis.url,
      NODE_OPTIONS: `--import=${pathToFileURL(SHIFTED_CLOCK).href}`,
      KEYGATE_TEST_CLOCK_SHIFT_MS: String(shift),
      WEBHOOK_ALLOW_PRIVATE: 'true',
    }
    const created = await runKeygate(['root-key', 'create', '--permissions', '*', '--redis', redis.url])
    expect(created.code, created.stderr).toBe(0)
    rootKey = created.stdout.trim()
    for (let i = 0; i < 2; i++)
      planes.push(await startKeygate(['control-plane'], { ...env, CLICKHOUSE_URL: clickhouse().url }))
    for (let i = 0; i < 2; i++) verifiers.push(await startKeygate(['verifier'], env))
  }, 60_000)
  afterAll(async () => {
    for (const process of [...verifiers, ...planes]) await process.stop()
    await receiver?.stop()
  })

  async function call(plane: KeygateProcess, path: string, body: object) {
    const response = await fetch(`${plane.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await response.json()) as Record<string, any>
  }
  const verify = async (on: KeygateProcess, key: string, times: number) => {
    for (let i = 0; i < times; i++) {
      const answer = await fetch(`${on.url}/v1/keys.verifyKey`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key }),
      })
      expect(((await answer.json()) as { valid: boolean }).valid).toBe(true)
    }
  }

  it('sends the hour once, with every verification of both verifiers counted once', async () => {
    const [first] = planes
    const { apiId } = await call(first!, '/v1/apis.createApi', { name: 'failover' })
    const { key } = await call(first!, '/v1/keys.createKey', { apiId, externalId: 'acme' })
    const endpoint = await call(first!, '/v1/webhooks.createEndpoint', {
      url: receiver.url,
      eventTypes: ['usage.hourly'],
    })
    receiver.secret = endpoint.secret
    // Usage events are sent from the hour under way once an ingest pass has seen the endpoint.
    await waitFor(
      async () => ((await redis.admin.hget('kg:analytics:marks', 'next.usage.hourly')) !== null ? true : undefined),
      'an ingest pass that saw the endpoint',
      30_000,
      100,
    )
    await verify(verifiers[0]!, key, 4)
    await verify(verifiers[1]!, key, 6)
    expect(processNow(), 'the verifications are in the hour').toBeLessThan(hourEnd)

    // A few seconds into the next hour, before the hour can be complete (a pass completes it only from 10 s past its
    // end), the control plane ingesting dies: the other one completes and sends it. Verifications of the next hour keep
    // the passes busy (the lease is held through each, and lapses between idle ones).
    await waitFor(
      () => (processNow() >= hourEnd + KILLED_AFTER_END_MS ? true : undefined),
      'the hour over',
      LEAD_MS,
      100,
    )
    await verify(verifiers[0]!, key, 1)
    await verify(verifiers[1]!, key, 1)
    const holder = await waitFor(
      async () => (await redis.admin.get('kg:analytics:lease:ingest')) ?? undefined,
      'a control plane ingesting',
      20_000,
      20,
    )
    const victim = planes.find((plane) => holder.includes(`:${plane.child.pid}:`))
    expect(victim, `a control plane holds the lease (${holder})`).toBeDefined()
    await victim!.stop('SIGKILL')
    planes.splice(planes.indexOf(victim!), 1)
    const [survivor] = planes
    // The verifiers go on answering: the next hour's, not this one's.
    await verify(verifiers[1]!, key, 1)

    const ours = () =>
      receiver.events.filter(
        (event) =>
          event.type === 'usage.hourly' &&
          event.data.externalId === 'acme' &&
          event.data.period.start === hourEnd - HOUR,
      )
    await waitFor(() => (ours().length > 0 ? true : undefined), "the hour's usage.hourly", 60_000, 250)
    const [event] = ours()
    expect(event!.signed).toBe(true)
    expect(event!.data.verifications).toMatchObject({ valid: 10, total: 10 })
    expect(event!.data.billable).toBe(10)
    // No other for it, however many passes follow; no id twice.
    const later = Date.now() + 6_000
    await waitFor(() => (Date.now() > later ? true : undefined), 'a few more ingest passes', 10_000, 500)
    expect(ours()).toHaveLength(1)
    expect(new Set(receiver.events.map((received) => received.id)).size).toBe(receiver.events.length)
    // The engine holds each verification once: the hour's 10, and the next hour's 3 so far.
    const hours = async () => {
      const usage = await call(survivor!, '/v2/analytics.getUsage', {
        externalId: 'acme',
        start: hourEnd - HOUR,
        end: hourEnd + HOUR,
        granularity: 'hour',
      })
      return (usage.data.periods as { verifications: { valid: number } }[]).map((period) => period.verifications.valid)
    }
    await waitFor(async () => ((await hours())[1] === 3 ? true : undefined), "the next hour's rows in", 30_000, 250)
    expect(await hours()).toEqual([10, 3])
  }, 240_000)
})
