import { expect, it } from 'vitest'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

/**
 * Behaviours that Unkey's own v1 route tests pin down (apps/api/src/routes/v1_*.test.ts at ccfc028d), restated in
 * our words: a client written against Unkey v1 must get the same answers here.
 */
onBothStores('Unkey v1 behaviours', { clock: () => new ManualClock(Date.UTC(2026, 10, 22, 12)) }, (stack) => {
  const { post } = stack
  const get = async (path: string) => {
    const response = await stack.controlPlane.app.inject({ method: 'GET', url: `/v1/${path}`, headers: ADMIN_HEADERS })
    return { status: response.statusCode, body: response.json(), headers: response.headers }
  }
  const newApi = async () => (await post('apis.createApi', { name: 'v1 behaviours' })).body.apiId as string

  it('a monthly refill without refillDay refills on the 1st, and getKey says so', async () => {
    const apiId = await newApi()
    const { body: created } = await post('keys.createKey', {
      apiId,
      remaining: 10,
      refill: { interval: 'monthly', amount: 20 },
    })
    expect((await stack.getKey(created.keyId)).refill).toEqual({ interval: 'monthly', amount: 20, refillDay: 1 })

    const { body: other } = await post('keys.createKey', { apiId, remaining: 10 })
    expect(
      (await post('keys.updateKey', { keyId: other.keyId, refill: { interval: 'monthly', amount: 130 } })).status,
    ).toBe(200)
    const updated = await stack.getKey(other.keyId)
    expect(updated).toMatchObject({ remaining: 10, refill: { interval: 'monthly', amount: 130, refillDay: 1 } })
    // A daily refill has no day.
    await post('keys.updateKey', { keyId: other.keyId, refill: { interval: 'daily', amount: 5 } })
    expect((await stack.getKey(other.keyId)).refill).toEqual({ interval: 'daily', amount: 5 })
    const listed = (await get(`apis.listKeys?apiId=${apiId}`)).body.keys as { id: string; refill: unknown }[]
    expect(listed.find((key) => key.id === created.keyId)!.refill).toEqual({
      interval: 'monthly',
      amount: 20,
      refillDay: 1,
    })
  })

  it('listKeys counts the whole api in total, also when filtered by externalId or ownerId', async () => {
    const apiId = await newApi()
    for (let i = 0; i < 6; i++) await post('keys.createKey', { apiId, ...(i % 2 === 0 ? { externalId: 'acme' } : {}) })
    for (const filter of ['externalId', 'ownerId']) {
      const { body } = await get(`apis.listKeys?apiId=${apiId}&${filter}=acme`)
      expect({ filter, keys: body.keys.length, total: body.total }).toEqual({ filter, keys: 3, total: 6 })
    }
    expect((await get(`apis.listKeys?apiId=${apiId}&externalId=nobody`)).body).toEqual({ keys: [], total: 6 })
  })

  it('updateKey takes expires equal to now, or past: the key is EXPIRED from then on', async () => {
    const apiId = await newApi()
    const now = stack.clock!.now()
    for (const expires of [now, now - 60_000]) {
      const { body: created } = await post('keys.createKey', { apiId })
      const update = await post('keys.updateKey', { keyId: created.keyId, expires, name: 'ended', enabled: true })
      expect({ expires, status: update.status }).toEqual({ expires, status: 200 })
      expect(await stack.getKey(created.keyId)).toMatchObject({ expires })
      await waitFor(async () => (await stack.verify({ key: created.key })).code === 'EXPIRED', 'the verifier to see it')
    }
  })

  it('updateRemaining set on a key without credits gives it credits (200); increment and decrement are a 400', async () => {
    const apiId = await newApi()
    const { body: created } = await post('keys.createKey', { apiId })
    for (const op of ['increment', 'decrement']) {
      const refused = await post('keys.updateRemaining', { keyId: created.keyId, op, value: 1 })
      expect({ op, status: refused.status, code: refused.body.error.code }).toEqual({
        op,
        status: 400,
        code: 'BAD_REQUEST',
      })
    }
    expect(await post('keys.updateRemaining', { keyId: created.keyId, op: 'set', value: 2 })).toEqual({
      status: 200,
      body: { remaining: 2 },
    })
    expect((await stack.getKey(created.keyId)).remaining).toBe(2)
    // The verifiers hear of it: the key now spends credits, and stops when they are gone.
    await waitFor(
      async () => (await stack.verify({ key: created.key })).remaining === 1,
      'the credits to reach the verifier',
    )
    expect(await stack.verify({ key: created.key })).toMatchObject({ valid: true, remaining: 0 })
    expect((await stack.verify({ key: created.key })).code).toBe('USAGE_EXCEEDED')
    // set null takes them away again: no limit.
    expect(await post('keys.updateRemaining', { keyId: created.keyId, op: 'set', value: null })).toEqual({
      status: 200,
      body: {},
    })
    expect(await stack.getKey(created.keyId)).not.toHaveProperty('remaining')
    expect((await post('keys.updateRemaining', { keyId: created.keyId, op: 'increment', value: null })).status).toBe(
      400,
    )
  })

  it('createApi wants a name of at least 3 characters', async () => {
    for (const name of ['', 'ab']) {
      expect(await post('apis.createApi', { name })).toMatchObject({
        status: 400,
        body: { error: { code: 'BAD_REQUEST', message: 'name: must be at least 3 characters' } },
      })
    }
    expect((await post('apis.createApi', { name: 'abc' })).status).toBe(200)
  })

  it('verifyKey names the limit that refused a call in Unkey-Ratelimit-Triggered, on the verifier and the control plane', async () => {
    const apiId = await newApi()
    const { body: created } = await post('keys.createKey', {
      apiId,
      ratelimit: { limit: 1, duration: 60_000, async: false },
    })
    await waitFor(async () => (await stack.verify({ key: created.key })).code === 'RATE_LIMITED', 'the key to verify')
    for (const server of [stack.verifier, stack.controlPlane]) {
      const verifyKey = (payload: object) =>
        server.app.inject({ method: 'POST', url: '/v1/keys.verifyKey', headers: JSON_ONLY, payload })
      // The key's own limit is Unkey's `default`; an ad-hoc limit of the request goes by its name.
      const own = await verifyKey({ key: created.key })
      expect(own.json()).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
      expect(own.headers['unkey-ratelimit-triggered']).toBe('default')
      expect(own.json()).not.toHaveProperty('triggeredLimit')
      const { body: other } = await post('keys.createKey', { apiId })
      const adHoc = { name: 'uploads', limit: 1, duration: 60_000, async: false }
      await waitFor(async () => (await verifyKey({ key: other.key, ratelimits: [adHoc] })).json().valid, 'a first call')
      const refused = await verifyKey({ key: other.key, ratelimits: [adHoc] })
      expect(refused.json().code).toBe('RATE_LIMITED')
      expect(refused.headers['unkey-ratelimit-triggered']).toBe('uploads')
      // Any other answer goes without it.
      const valid = await verifyKey({ key: other.key })
      expect(valid.json().code).toBe('VALID')
      expect(valid.headers).not.toHaveProperty('unkey-ratelimit-triggered')
    }
  })

  it('getApi, getKey and listKeys carry the one workspace id; whoami carries the environment', async () => {
    const apiId = await newApi()
    expect((await get(`apis.getApi?apiId=${apiId}`)).body).toMatchObject({ id: apiId, workspaceId: 'ws_keygate' })
    const { body: created } = await post('keys.createKey', { apiId, name: 'test', environment: 'test', remaining: 100 })
    expect(await stack.getKey(created.keyId)).toMatchObject({ id: created.keyId, apiId, workspaceId: 'ws_keygate' })
    expect((await get(`apis.listKeys?apiId=${apiId}`)).body.keys).toMatchObject([{ workspaceId: 'ws_keygate' }])
    expect((await post('keys.whoami', { key: created.key })).body).toMatchObject({
      id: created.keyId,
      name: 'test',
      remaining: 100,
      enabled: true,
      environment: 'test',
    })
  })
})
