import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { jsonPoster, startKeygate, type KeygateProcess } from '../support/processes.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { useRedisServer } from '../support/redis-server.js'
import { waitFor } from '../support/wait-for.js'
import { startWebhookReceiver, type ReceivedEvent } from '../support/webhook-receiver.js'

const ROOT_KEY = 'webhooks-e2e-root-key-0123456789'
const post = jsonPoster(ROOT_KEY)
const redis = useRedisServer()

/** What a user sets to deliver to their own machine, with retries short enough for a test to watch. */
const env = () => ({
  REDIS_URL: redis.url,
  KEYGATE_ROOT_KEY: ROOT_KEY,
  LOG_LEVEL: 'warn',
  WEBHOOK_ALLOW_PRIVATE: 'true',
  WEBHOOK_TIMEOUT_MS: '2000',
  WEBHOOK_RETRY_MAX_DELAY_MS: '2000',
})

const running: KeygateProcess[] = []
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>
beforeAll(async () => {
  receiver = await startWebhookReceiver()
})
afterAll(async () => {
  await Promise.all(running.map((process) => process.stop('SIGKILL')))
  await receiver.stop()
})

async function controlPlane(): Promise<KeygateProcess> {
  const process = await startKeygate(['control-plane'], env())
  running.push(process)
  return process
}

async function call(base: string, path: string, body: unknown): Promise<Record<string, any>> {
  const { status, body: answer } = await post(base, path, body)
  expect(status, `${path}: ${JSON.stringify(answer)}`).toBe(200)
  return answer
}

const received = (type: string, match: (data: Record<string, any>) => boolean) =>
  receiver.events.filter((event) => event.type === type && match(event.data))

/** The event of `type` whose data matches, once it has arrived: how long after `since` it came. */
async function arrival(type: string, match: (data: Record<string, any>) => boolean, since: number, timeoutMs = 5_000) {
  const event = await waitFor(() => received(type, match)[0], `${type} at the receiver`, timeoutMs, 20)
  return { event, afterMs: event.at - since }
}

describe('webhooks, end to end', () => {
  let a: KeygateProcess
  let apiId: string

  it('delivers each event type, signed, within 2 s of its cause', async () => {
    a = await controlPlane()
    const endpoint = await call(a.url, 'webhooks.createEndpoint', { url: receiver.url })
    receiver.useSecret(endpoint.secret)
    ;({ apiId } = await call(a.url, 'apis.createApi', { name: 'webhooks' }))

    const delays: Record<string, number> = {}
    let since = Date.now()
    const { keyId } = await call(a.url, 'keys.createKey', { apiId, name: 'first', meta: { plan: 'pro' } })
    const created = await arrival('key.created', (data) => data.keyId === keyId, since)
    delays['key.created'] = created.afterMs
    expect(created.event.data).toMatchObject({ keyId, apiId, name: 'first', meta: { plan: 'pro' }, enabled: true })
    // Ids and fields only: never a key or its hash.
    expect(JSON.stringify(created.event.data)).not.toMatch(/"(key|hash)"/)

    since = Date.now()
    await call(a.url, 'keys.updateKey', { keyId, enabled: false, remaining: 10 })
    const updated = await arrival('key.updated', (data) => data.keyId === keyId, since)
    delays['key.updated'] = updated.afterMs
    expect(updated.event.data.changed).toEqual(['credits', 'enabled'])
    expect(updated.event.data).toMatchObject({ enabled: false })

    since = Date.now()
    const rerolled = await call(a.url, 'keys.rerollKey', { keyId, expiration: 60_000 })
    const reroll = await arrival('key.rerolled', (data) => data.keyId === keyId, since)
    delays['key.rerolled'] = reroll.afterMs
    expect(reroll.event.data).toEqual({ keyId, apiId, newKeyId: rerolled.keyId })

    // Credits spent by verifications: the notices are written with the balance, on the verify path.
    const credited = await call(a.url, 'keys.createKey', { apiId, remaining: 2, creditsLowThreshold: 1 })
    since = Date.now()
    expect((await post(a.url, 'keys.verifyKey', { key: credited.key }, false)).body).toMatchObject({ valid: true })
    const low = await arrival('key.credits.low', (data) => data.keyId === credited.keyId, since)
    delays['key.credits.low'] = low.afterMs
    expect(low.event.data).toEqual({ keyId: credited.keyId, apiId, remaining: 1, threshold: 1 })
    since = Date.now()
    expect((await post(a.url, 'keys.verifyKey', { key: credited.key }, false)).body).toMatchObject({ valid: true })
    const exhausted = await arrival('key.credits.exhausted', (data) => data.keyId === credited.keyId, since)
    delays['key.credits.exhausted'] = exhausted.afterMs
    expect(exhausted.event.data).toEqual({ keyId: credited.keyId, apiId, remaining: 0 })

    since = Date.now()
    await call(a.url, 'keys.deleteKey', { keyId })
    delays['key.deleted'] = (await arrival('key.deleted', (data) => data.keyId === keyId, since)).afterMs

    since = Date.now()
    const { identityId } = await call(a.url, 'identities.createIdentity', { externalId: 'customer-1' })
    delays['identity.created'] = (await arrival('identity.created', (d) => d.identityId === identityId, since)).afterMs
    since = Date.now()
    await call(a.url, 'identities.updateIdentity', { identityId, meta: { tier: 'gold' } })
    delays['identity.updated'] = (await arrival('identity.updated', (d) => d.identityId === identityId, since)).afterMs
    since = Date.now()
    await call(a.url, 'identities.deleteIdentity', { identityId })
    delays['identity.deleted'] = (await arrival('identity.deleted', (d) => d.identityId === identityId, since)).afterMs

    since = Date.now()
    const rootKey = await call(a.url, 'rootKeys.createRootKey', { name: 'ci', permissions: ['api.*.read_key'] })
    const rootKeyId = rootKey.rootKeyId ?? rootKey.id
    delays['rootKey.created'] = (await arrival('rootKey.created', (d) => d.rootKeyId === rootKeyId, since)).afterMs
    since = Date.now()
    await call(a.url, 'rootKeys.revokeRootKey', { rootKeyId })
    delays['rootKey.revoked'] = (await arrival('rootKey.revoked', (d) => d.rootKeyId === rootKeyId, since)).afterMs

    since = Date.now()
    const kept = await call(a.url, 'rootKeys.createRootKey', { name: 'rolled', permissions: ['api.*.read_key'] })
    const roll = await call(a.url, 'rootKeys.rollRootKey', { rootKeyId: kept.rootKeyId })
    const rolled = await arrival('rootKey.rolled', (d) => d.rootKeyId === kept.rootKeyId, since)
    delays['rootKey.rolled'] = rolled.afterMs
    expect(rolled.event.data).toEqual({ rootKeyId: kept.rootKeyId, newRootKeyId: roll.rootKeyId })

    console.log(`webhooks: delivery after the call, ms: ${JSON.stringify(delays)}`)
    for (const [type, ms] of Object.entries(delays)) expect(ms, type).toBeLessThan(2_000)

    // webhooks.sendTest's example of each type carries every field the real event of that type carried.
    for (const type of Object.keys(delays)) {
      const real = receiver.events.find((event) => event.type === type && !event.id.startsWith('msg_test_'))!
      const sent = await call(a.url, 'webhooks.sendTest', { endpointId: endpoint.endpointId, eventType: type })
      expect(sent, type).toMatchObject({ delivered: true, eventType: type })
      const example = receiver.events.find((event) => event.id === sent.eventId)!
      expect(Object.keys(example.data), type).toEqual(expect.arrayContaining(Object.keys(real.data)))
    }
    expect(receiver.events.every((event) => event.verified)).toBe(true)
  })

  it('describes a key created, renamed and deleted at once as each write left it, its identity by both ids', async () => {
    const { identityId } = await call(a.url, 'identities.createIdentity', { externalId: 'customer-quick' })
    const { keyId } = await call(a.url, 'keys.createKey', {
      apiId,
      name: 'first',
      externalId: 'customer-quick',
      meta: { plan: 'free' },
    })
    await call(a.url, 'keys.updateKey', { keyId, name: 'second' })
    await call(a.url, 'keys.deleteKey', { keyId })
    const since = Date.now()
    const names = { identityId, externalId: 'customer-quick' }
    const deleted = await arrival('key.deleted', (data) => data.keyId === keyId, since)
    expect(deleted.event.data).toMatchObject({ keyId, apiId, name: 'second', meta: { plan: 'free' }, ...names })
    expect((await arrival('key.created', (data) => data.keyId === keyId, since)).event.data).toMatchObject({
      name: 'first',
      ...names,
    })
    expect((await arrival('key.updated', (data) => data.keyId === keyId, since)).event.data).toMatchObject({
      name: 'second',
      changed: ['name'],
      ...names,
    })
  })

  it('sends key.expiring once and key.expired at the deadline, with two control planes running', async () => {
    const b = await controlPlane()
    const since = Date.now()
    // Expiring within the lead time (7 days): key.expiring is due at once; key.expired in 3 s.
    const { keyId } = await call(b.url, 'keys.createKey', { apiId, expires: Date.now() + 3_000 })
    await arrival('key.expiring', (data) => data.keyId === keyId, since)
    const expired = await arrival('key.expired', (data) => data.keyId === keyId, since, 8_000)
    expect(expired.afterMs).toBeGreaterThanOrEqual(2_900)
    // Time for a second control plane to send either again, had it fired the deadlines too.
    await nothingHappensFor(1_000)
    expect(received('key.expiring', (data) => data.keyId === keyId)).toHaveLength(1)
    expect(received('key.expired', (data) => data.keyId === keyId)).toHaveLength(1)
  })

  it('completes a delivery cut off by a SIGKILL, and delivers everything after the receiver is back from a minute down', async () => {
    // Only `a` runs: the delivery that hangs is a's.
    for (const other of running.filter((process) => process !== a)) await other.stop('SIGKILL')
    receiver.setMode('hang')
    const { keyId: first } = await call(a.url, 'keys.createKey', { apiId, name: 'in flight' })
    await waitFor(
      () => receiver.requests.some((request) => request.mode === 'hang'),
      'the delivery in flight',
      5_000,
      20,
    )
    await a.stop('SIGKILL')
    const downSince = Date.now()
    receiver.setMode('down')
    const b = await controlPlane()
    const keyIds = [first]
    for (let i = 0; i < 10; i++)
      keyIds.push((await call(b.url, 'keys.createKey', { apiId, name: `while down ${i}` })).keyId)
    await waitFor(
      () => receiver.requests.filter((request) => request.mode === 'down').length >= 10,
      'attempts while down',
      20_000,
      50,
    )
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, downSince + 60_000 - Date.now())))
    receiver.setMode('up')
    const back = Date.now()
    await waitFor(
      () => keyIds.every((keyId) => received('key.created', (data) => data.keyId === keyId).length > 0),
      'every key.created after the receiver is back',
      15_000,
      50,
    )
    console.log(
      `webhooks: all ${keyIds.length} key.created events arrived within ${Date.now() - back} ms of the receiver's return, after ${receiver.requests.filter((r) => r.mode === 'down').length} refused attempts`,
    )
    // Duplicates only with the same webhook-id: one id per event, one event per id.
    const byId = new Map<string, ReceivedEvent[]>()
    for (const event of receiver.events) byId.set(event.id, [...(byId.get(event.id) ?? []), event])
    for (const copies of byId.values())
      expect(new Set(copies.map((event) => JSON.stringify([event.type, event.data.keyId]))).size).toBe(1)
    const ids = keyIds.map((keyId) => received('key.created', (data) => data.keyId === keyId).map((e) => e.id))
    for (const copies of ids) expect(new Set(copies).size).toBe(1)
    expect(receiver.events.every((event) => event.verified)).toBe(true)
  }, 120_000)
})

describe('webhook endpoints on a private address', () => {
  it('are refused unless the operator allows them', async () => {
    const strict = await startKeygate(['control-plane'], { ...env(), WEBHOOK_ALLOW_PRIVATE: 'false' })
    running.push(strict)
    const refused = await post(strict.url, 'webhooks.createEndpoint', { url: 'http://127.0.0.1:9/hooks' })
    expect(refused.status).toBe(400)
    expect(JSON.stringify(refused.body)).toMatch(/loopback|private/i)
  })
})
