import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import pino from 'pino'
import { Registry } from 'prom-client'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { DeliveryWorker } from '../../control-plane/webhooks/delivery/delivery-worker.js'
import { EndpointSender } from '../../control-plane/webhooks/delivery/endpoint-sender.js'
import { createWebhookMetrics } from '../../control-plane/webhooks/webhook-metrics.js'
import { DEFAULT_WEBHOOK_POLICY, type WebhookPolicy } from '../../control-plane/webhooks/webhook-policy.js'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { createMemoryStore, type MemoryStore } from '../../shared/store/memory-store.js'
import type { WebhookEndpoint, WebhookEvent } from '../../shared/webhook.js'

const POLICY: WebhookPolicy = { ...DEFAULT_WEBHOOK_POLICY, allowPrivateAddresses: true, timeoutMs: 1_000 }

/** A real HTTP endpoint on this machine: answers `status` (with `headers`), or never (`hang`); `answer` changes it. */
async function endpointServer(status: number | 'hang', headers: Record<string, string> = {}) {
  const received: string[] = []
  const target = { answer: status }
  const server: Server = createServer((request, response) => {
    received.push(String(request.headers['webhook-id']))
    request.resume()
    const answer = target.answer
    if (answer !== 'hang') request.on('end', () => response.writeHead(answer, headers).end('a body'.repeat(1_000)))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return Object.assign(target, {
    url,
    received,
    stop: async () => {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    },
  })
}

const endpoint = (id: string, url: string): WebhookEndpoint => ({
  id,
  url,
  eventTypes: [],
  enabled: true,
  secrets: [{ secret: `whsec_${Buffer.alloc(32, 9).toString('base64')}`, createdAt: 0 }],
  createdAt: 0,
})
const event = (n: number, at: number): WebhookEvent => ({ id: `msg_${n}`, type: 'key.created', at, data: { n } })

describe('DeliveryWorker with real endpoints', () => {
  let store: MemoryStore
  let now: number
  let sender: EndpointSender
  let worker: DeliveryWorker
  const servers: { stop(): Promise<void> }[] = []

  beforeEach(() => {
    store = createMemoryStore(new MemoryChangeFeed())
    now = Date.now()
    sender = new EndpointSender(POLICY)
    worker = new DeliveryWorker({
      webhooks: store.webhooks,
      sender,
      policy: POLICY,
      clock: { now: () => now },
      log: pino({ level: 'silent' }),
      metrics: createWebhookMetrics(new Registry(), async () => 0),
    })
  })
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()))
    await sender.close()
  })

  // An endpoint's lane goes by how long its requests hold a slot: one answering 500 at once costs the others nothing.
  it('sends to a new endpoint one request at a time, then 4 at once once it answered quickly, a 500 as a 204', async () => {
    const target = await endpointServer(500)
    servers.push(target)
    await store.webhooks.createEndpoint(endpoint('whep_target', target.url))
    for (let n = 0; n < 12; n++) await store.webhooks.enqueue(event(n, now), ['whep_target'], now)
    // Not shown quick yet: one at a time; the others passed over, due again at the next look.
    for (let look = 0; look < 5; look++) {
      const one = await worker.claim()
      expect(one.claimed).toBe(1)
      await one.sent
      now += 200
    }
    // It answered at once five times in a row: four at once, though it failed.
    const quick = await worker.claim()
    expect(quick.claimed).toBe(4)
    await quick.sent
    expect(target.received).toHaveLength(9)
    const attempts = await store.webhooks.listAttempts('whep_target', 100)
    expect(attempts.map((attempt) => attempt.status)).toEqual(Array(9).fill(500))
  })

  // One quick answer used to bring it back to four slots of the fast lane, each then held for a whole timeout; a new
  // one that flaps from the start is never given them either.
  it('keeps an endpoint that is quick and silent by turns in the slow lane until it answers quickly 5 times in a row', async () => {
    const target = await endpointServer(204)
    servers.push(target)
    await store.webhooks.createEndpoint(endpoint('whep_flapping', target.url))
    for (let n = 0; n < 40; n++) await store.webhooks.enqueue(event(n, now), ['whep_flapping'], now)
    const look = async (answer: number | 'hang', claimed: number) => {
      target.answer = answer
      now += 1_000
      const next = await worker.claim()
      expect(next.claimed, `claimed while it answers ${answer}`).toBe(claimed)
      await next.sent
    }
    for (const answer of [204, 'hang', 204, 'hang', 204, 'hang', 204] as const) await look(answer, 1)
    for (let n = 0; n < 4; n++) await look(204, 1)
    // Five quick answers in a row since it was last slow: back in the fast lane.
    await look(204, 4)
  })

  it('gives endpoints that never answer 4 slots in all, one each, and never the slots of those that answer', async () => {
    const registry = new Registry()
    worker = new DeliveryWorker({
      webhooks: store.webhooks,
      sender,
      policy: POLICY,
      clock: { now: () => now },
      log: pino({ level: 'silent' }),
      metrics: createWebhookMetrics(registry, async () => 0),
    })
    const inFlight = async (lane: string) =>
      (await registry.getSingleMetric('keygate_webhook_requests_in_flight')!.get()).values.find(
        (value) => value.labels.lane === lane,
      )?.value
    const silent = await Promise.all(Array.from({ length: 6 }, () => endpointServer('hang')))
    const fast = await endpointServer(204)
    servers.push(...silent, fast)
    // The fast one has shown it is quick (five answers in a row, one at a time): in the fast lane.
    await store.webhooks.createEndpoint(endpoint('whep_fast', fast.url))
    for (let n = 100; n < 105; n++) await store.webhooks.enqueue(event(n, now), ['whep_fast'], now)
    for (let look = 0; look < 5; look++) {
      expect(await worker.runOnce()).toBe(1)
      now += 200
    }
    const ids = silent.map((_, n) => `whep_silent${n}`)
    for (const [n, server] of silent.entries()) await store.webhooks.createEndpoint(endpoint(ids[n]!, server.url))
    const everyone = [...ids, 'whep_fast']
    for (let n = 0; n < 20; n++) await store.webhooks.enqueue(event(n, now), everyone, now)
    // The silent ones new: one request each, out until they time out; the fast one 4 at once, answered at once.
    const probes = await worker.claim()
    expect(probes.claimed).toBe(10)
    expect(await inFlight('new')).toBe(6)
    await probes.sent
    expect(silent.map((server) => server.received.length)).toEqual(Array(6).fill(1))
    expect(await inFlight('new')).toBe(0)
    // Now slow: 4 of them have a request out, one each; the fast one 4 of its own, beside them.
    now += 1_000
    const next = await worker.claim()
    expect(next.claimed).toBe(8)
    await expect.poll(() => fast.received.length).toBe(13)
    expect(await inFlight('slow')).toBe(4)
    // Each reaches its server on its own connection: waited for, as the fast one's are.
    await expect.poll(() => silent.filter((server) => server.received.length === 2).length).toBe(4)
    // While they hang, the fast endpoint's deliveries keep going out, four at a time; no other slow one is sent.
    for (let look = 0; look < 3; look++) {
      now += 200
      const more = await worker.claim()
      expect(more.claimed).toBe(4)
      await more.sent.then(
        () => undefined,
        () => undefined,
      )
      await expect.poll(() => fast.received.length).toBe(17 + 4 * look)
    }
    expect(silent.reduce((sum, server) => sum + server.received.length, 0)).toBe(10)
    await next.sent
    expect(await inFlight('slow')).toBe(0)
  })

  it('completes on 2xx, keeps 1 KiB of the answer, retries anything else, and dead-letters after the window', async () => {
    const ok = await endpointServer(200)
    const failing = await endpointServer(500)
    servers.push(ok, failing)
    await store.webhooks.createEndpoint(endpoint('whep_ok', ok.url))
    await store.webhooks.createEndpoint(endpoint('whep_failing', failing.url))
    await store.webhooks.enqueue(event(1, now), ['whep_ok', 'whep_failing'], now)
    expect(await worker.runOnce()).toBe(2)
    const [delivered] = await store.webhooks.listAttempts('whep_ok', 10)
    expect(delivered).toMatchObject({ outcome: 'delivered', status: 200, attempt: 1 })
    expect(delivered!.responseSnippet).toHaveLength(1_024)
    const [failed] = await store.webhooks.listAttempts('whep_failing', 10)
    expect(failed).toMatchObject({ outcome: 'retry', status: 500, error: 'HTTP 500', attempt: 1 })
    expect(await store.webhooks.queueDepth()).toBe(1)
    // Not due again before its wait (at least half a second for the first retry).
    expect(await worker.runOnce()).toBe(0)
    now += POLICY.retryWindowMs
    expect(await worker.runOnce()).toBe(1)
    const [last] = await store.webhooks.listAttempts('whep_failing', 10)
    expect(last).toMatchObject({ outcome: 'dead', attempt: 2 })
    expect(await store.webhooks.queueDepth()).toBe(0)
    expect((await store.webhooks.listDead('whep_failing', 10)).map((dead) => dead.eventId)).toEqual(['msg_1'])
  })

  it('refuses to connect to a private address unless the policy allows it, at delivery time', async () => {
    const target = await endpointServer(204)
    servers.push(target)
    const strict = new EndpointSender({ ...POLICY, allowPrivateAddresses: false })
    try {
      const byAddress = await strict.send(target.url, {}, '{}')
      expect(byAddress.error).toMatch(/^refused: .*loopback/)
      // A name that resolves to a private address is refused when connecting, whatever it resolved to before.
      const byName = await strict.send(target.url.replace('127.0.0.1', 'localhost'), {}, '{}')
      expect(byName.error).toMatch(/^refused: /)
      expect(target.received).toEqual([])
    } finally {
      await strict.close()
    }
  })

  // Taking them from the queue and putting them back, a look at a time, left the others behind them waiting (and kept
  // the worker and Redis busy) for as long as that endpoint's backlog lasted.
  it("claims past the backlog of an endpoint whose every slot is busy: the others' deliveries go out at once", async () => {
    const slow = await endpointServer('hang')
    const fast = await endpointServer(204)
    servers.push(slow, fast)
    await store.webhooks.createEndpoint(endpoint('whep_slow', slow.url))
    await store.webhooks.createEndpoint(endpoint('whep_fast', fast.url))
    for (let n = 0; n < 4; n++) await store.webhooks.enqueue(event(n, now), ['whep_slow'], now)
    // Not heard from yet: one request; the other three are passed over.
    const busy = await worker.claim()
    await expect.poll(() => slow.received.length).toBe(1)
    for (let n = 4; n < 100; n++) await store.webhooks.enqueue(event(n, now), ['whep_slow'], now)
    await store.webhooks.enqueue(event(100, now + 1), ['whep_fast'], now + 1)
    now += 1
    const next = await worker.claim()
    expect(next.claimed).toBe(1)
    await next.sent
    expect(fast.received).toEqual(['msg_100'])
    await busy.sent
    // The backlog was left as it was queued: no attempt made, due again once a slot may be free.
    const backlog = await store.webhooks.claimDue(now + 60_000, 1, 1_000)
    expect(backlog.filter((d) => d.endpointId === 'whep_slow' && d.attempts === 0)).toHaveLength(99)
  })

  it('claims a delivery for longer than its request can take: no other worker sends it meanwhile', async () => {
    const slow = await endpointServer('hang')
    servers.push(slow)
    await store.webhooks.createEndpoint(endpoint('whep_slow', slow.url))
    await store.webhooks.enqueue(event(1, now), ['whep_slow'], now)
    const { claimed, sent } = await worker.claim()
    expect(claimed).toBe(1)
    // Another control plane looking as late as the request may last still finds it claimed.
    expect(await store.webhooks.claimDue(now + POLICY.timeoutMs, 1, 10)).toEqual([])
    await sent
    expect(slow.received).toHaveLength(1)
  })

  it('drops, unsent, what a disabled endpoint or one no longer subscribed to its type was queued', async () => {
    const target = await endpointServer(204)
    servers.push(target)
    await store.webhooks.createEndpoint({ ...endpoint('whep_off', target.url), enabled: false })
    await store.webhooks.createEndpoint({ ...endpoint('whep_deletes', target.url), eventTypes: ['key.deleted'] })
    await store.webhooks.enqueue(event(1, now), ['whep_off', 'whep_deletes'], now)
    expect(await worker.runOnce()).toBe(2)
    expect(target.received).toEqual([])
    expect(await store.webhooks.queueDepth()).toBe(0)
    expect(await store.webhooks.listAttempts('whep_off', 10)).toEqual([])
  })

  // The deriver queued them while the endpoint took both apis: what it takes when they come due is what counts.
  it('drops, unsent, what an endpoint was queued of an api its scope no longer has', async () => {
    const target = await endpointServer(204)
    servers.push(target)
    await store.webhooks.createEndpoint({ ...endpoint('whep_narrowed', target.url), apiIds: ['api_kept'] })
    const about = (n: number, apiId: string): WebhookEvent => ({ ...event(n, now), data: { keyId: `key_${n}`, apiId } })
    await store.webhooks.enqueue(about(1, 'api_dropped'), ['whep_narrowed'], now)
    await store.webhooks.enqueue(about(2, 'api_kept'), ['whep_narrowed'], now)
    // A new endpoint is sent one delivery at a time: a look each.
    for (let looks = 0; (await store.webhooks.queueDepth()) > 0 && looks < 5; looks++) {
      await worker.runOnce()
      now += 1_000
    }
    expect(target.received).toEqual(['msg_2'])
    expect(await store.webhooks.queueDepth()).toBe(0)
    expect((await store.webhooks.listAttempts('whep_narrowed', 10)).map((attempt) => attempt.eventId)).toEqual([
      'msg_2',
    ])
  })

  it('takes a redirect as a failed attempt, not followed and not delivered', async () => {
    const target = await endpointServer(204)
    const moved = await endpointServer(308, { location: target.url })
    servers.push(target, moved)
    await store.webhooks.createEndpoint(endpoint('whep_moved', moved.url))
    await store.webhooks.enqueue(event(1, now), ['whep_moved'], now)
    await worker.runOnce()
    const [attempt] = await store.webhooks.listAttempts('whep_moved', 10)
    expect(attempt).toMatchObject({ status: 308, outcome: 'retry', error: 'HTTP 308' })
    expect(target.received).toEqual([])
    expect(await store.webhooks.queueDepth()).toBe(1)
  })
})
