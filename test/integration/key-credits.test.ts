import { beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { lastRefillBoundary } from '../../shared/keys/credits.js'
import { hashKey } from '../../shared/keys/key-material.js'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

describe('refill boundaries (UTC)', () => {
  it('daily: the start of the UTC day; monthly: refillDay, or the month’s last day when shorter', () => {
    expect(lastRefillBoundary({ interval: 'daily', amount: 1 }, Date.UTC(2026, 10, 22, 23, 59))).toBe(
      Date.UTC(2026, 10, 22),
    )
    expect(lastRefillBoundary({ interval: 'monthly', amount: 1 }, Date.UTC(2026, 10, 22))).toBe(Date.UTC(2026, 10, 1))
    expect(lastRefillBoundary({ interval: 'monthly', amount: 1, refillDay: 31 }, Date.UTC(2026, 10, 30, 1))).toBe(
      Date.UTC(2026, 10, 30),
    )
    expect(lastRefillBoundary({ interval: 'monthly', amount: 1, refillDay: 31 }, Date.UTC(2026, 10, 29))).toBe(
      Date.UTC(2026, 9, 31),
    )
    expect(lastRefillBoundary({ interval: 'monthly', amount: 1, refillDay: 30 }, Date.UTC(2028, 1, 29, 12))).toBe(
      Date.UTC(2028, 1, 29),
    )
    expect(lastRefillBoundary({ interval: 'monthly', amount: 1, refillDay: 15 }, Date.UTC(2027, 0, 3))).toBe(
      Date.UTC(2026, 11, 15),
    )
  })
})

onBothStores('usage credits', { clock: () => new ManualClock(Date.UTC(2031, 10, 22, 12)) }, (stack) => {
  const clock = stack.clock!
  let apiId: string
  beforeAll(async () => {
    apiId = (await stack.post('apis.createApi', { name: 'credits' })).body.apiId
  })
  const { post, getKey } = stack
  const verify = async (key: string, cost?: number) =>
    stack.verify(cost === undefined ? { key } : { key, remaining: { cost } })

  it('lets exactly `remaining` calls through, spending each call’s cost; 0 is free', async () => {
    const { body: key } = await post('keys.createKey', { apiId, remaining: 5 })
    expect(await verify(key.key)).toMatchObject({ valid: true, code: 'VALID', remaining: 4 })
    expect(await verify(key.key, 3)).toMatchObject({ valid: true, remaining: 1 })
    expect(await verify(key.key, 2)).toMatchObject({
      valid: false,
      code: 'USAGE_EXCEEDED',
      remaining: 1,
      keyId: key.keyId,
    })
    expect(await verify(key.key, 0)).toMatchObject({ valid: true, remaining: 1 })
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 0 })
    expect(await verify(key.key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', remaining: 0 })
    expect(await getKey(key.keyId)).toMatchObject({ remaining: 0 })
  })

  it('spends nothing on a call that is disabled, of another api, expired or lacks a permission', async () => {
    const balanceOf = async (keyId: string) => (await getKey(keyId)).remaining
    const { body: disabled } = await post('keys.createKey', { apiId, remaining: 2, enabled: false })
    expect((await verify(disabled.key)).code).toBe('DISABLED')
    const { body: key } = await post('keys.createKey', { apiId, remaining: 2, expires: clock.now() + 1_000 })
    expect(
      (
        await post('keys.verifyKey', { key: key.key, apiId: 'api_other' }, stack.verifier, {
          'content-type': 'application/json',
        })
      ).body.code,
    ).toBe('FORBIDDEN')
    expect(
      (
        await post('keys.verifyKey', { key: key.key, authorization: { permissions: 'p' } }, stack.verifier, {
          'content-type': 'application/json',
        })
      ).body.code,
    ).toBe('INSUFFICIENT_PERMISSIONS')
    clock.advance(1_000)
    expect((await verify(key.key)).code).toBe('EXPIRED')
    expect(await balanceOf(disabled.keyId)).toBe(2)
    expect(await balanceOf(key.keyId)).toBe(2)
  })

  it('changes the balance with keys.updateRemaining, and clears credits with remaining:null', async () => {
    const { body: key } = await post('keys.createKey', { apiId, remaining: 1 })
    expect(await post('keys.updateRemaining', { keyId: key.keyId, op: 'increment', value: 4 })).toMatchObject({
      status: 200,
      body: { remaining: 5 },
    })
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'decrement', value: 2 })).body).toEqual({
      remaining: 3,
    })
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'decrement', value: 99 })).body).toEqual({
      remaining: 0,
    })
    expect((await verify(key.key)).code).toBe('USAGE_EXCEEDED')
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'set', value: 1 })).body).toEqual({
      remaining: 1,
    })
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 0 })

    await post('keys.updateKey', { keyId: key.keyId, remaining: null })
    await waitFor(async () => (await verify(key.key)).valid === true, 'the key without credits', 2_000, 5).catch(
      () => {},
    )
    const unlimited = await verify(key.key)
    expect(unlimited).toMatchObject({ valid: true })
    expect(unlimited).not.toHaveProperty('remaining')
    // Without credits, only `set` means something (it gives the key some: keys.updateRemaining's own tests).
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'increment', value: 3 })).status).toBe(400)
    expect((await post('keys.updateRemaining', { keyId: 'key_missing', op: 'set', value: 3 })).status).toBe(404)
  })

  it('refills daily at the start of each UTC day, resetting (not adding to) the balance', async () => {
    clock.ms = Date.UTC(2031, 10, 22, 23, 0)
    const { body: key } = await post('keys.createKey', {
      apiId,
      remaining: 2,
      refill: { interval: 'daily', amount: 3 },
    })
    await verify(key.key)
    await verify(key.key)
    expect((await verify(key.key)).code).toBe('USAGE_EXCEEDED')
    clock.ms = Date.UTC(2031, 10, 22, 23, 59, 59, 999)
    expect((await verify(key.key)).code).toBe('USAGE_EXCEEDED')
    clock.ms = Date.UTC(2031, 10, 23, 0, 0)
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 2 })
    clock.advance(3_600_000)
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 1 })
  })

  it('refills monthly on refillDay (the 30th in a 30-day month for refillDay 31)', async () => {
    clock.ms = Date.UTC(2031, 10, 10)
    const { body: key } = await post('keys.createKey', {
      apiId,
      remaining: 1,
      refill: { interval: 'monthly', amount: 10, refillDay: 31 },
    })
    await verify(key.key)
    clock.ms = Date.UTC(2031, 10, 29, 23)
    expect((await verify(key.key)).code).toBe('USAGE_EXCEEDED')
    clock.ms = Date.UTC(2031, 10, 30, 0, 1)
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 9 })
  })

  it('stores a monthly refill given without its day as one on the 1st: createKey and the imports', async () => {
    const refill = { interval: 'monthly', amount: 20 }
    const hash = hashKey(newId('key'))
    const migrated = await stack.controlPlane.app.inject({
      method: 'POST',
      url: '/v2/keys.migrateKeys',
      headers: ADMIN_HEADERS,
      payload: { migrationId: 'monthly', apiId, keys: [{ hash, credits: { remaining: 10, refill } }] },
    })
    const keyIds = [
      (await post('keys.createKey', { apiId, remaining: 10, refill })).body.keyId,
      (await post('migrations.createKeys', [{ apiId, plaintext: newId('key'), remaining: 10, refill }])).body.keyIds[0],
      migrated.json().data.migrated[0].keyId,
    ]
    for (const keyId of keyIds) {
      const record = await stack.backend.store.keys.getKeyById(keyId)
      expect({ keyId, refill: record?.refill }).toEqual({ keyId, refill: { ...refill, refillDay: 1 } })
    }
  })

  it('applies a due refill before keys.updateRemaining, so the refill never undoes it', async () => {
    clock.ms = Date.UTC(2031, 10, 22, 12)
    const { body: key } = await post('keys.createKey', {
      apiId,
      remaining: 100,
      refill: { interval: 'daily', amount: 100 },
    })
    clock.ms = Date.UTC(2031, 10, 23, 9)
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'set', value: 1000 })).body).toEqual({
      remaining: 1000,
    })
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 999 })
    clock.ms = Date.UTC(2031, 10, 24, 9)
    expect((await post('keys.updateRemaining', { keyId: key.keyId, op: 'increment', value: 5 })).body).toEqual({
      remaining: 105,
    })
    expect(await verify(key.key)).toMatchObject({ remaining: 104 })
  })

  it('starts a refill added to an existing key at the next boundary, not at once', async () => {
    clock.ms = Date.UTC(2031, 10, 20, 12)
    const { body: key } = await post('keys.createKey', { apiId, remaining: 5 })
    clock.ms = Date.UTC(2031, 10, 22, 10)
    await post('keys.updateKey', { keyId: key.keyId, refill: { interval: 'daily', amount: 100 } })
    await waitFor(async () => (await getKey(key.keyId)).refill !== undefined, 'the refill', 2_000, 5).catch(() => {})
    // The verifier holds the key with its refill before the next call.
    await stack.verifier.verifier.pollNow()
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 4 })
    clock.ms = Date.UTC(2031, 10, 23, 0, 0, 1)
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 99 })
  })

  it('caps a balance at 1e12 and keeps it exact', async () => {
    const { body: key } = await post('keys.createKey', { apiId, remaining: 1_000_000_000_000 })
    expect(
      (await post('keys.updateRemaining', { keyId: key.keyId, op: 'increment', value: 1_000_000_000_000 })).body,
    ).toEqual({ remaining: 1_000_000_000_000 })
    expect(await verify(key.key)).toMatchObject({ valid: true, remaining: 999_999_999_999 })
    const who = await post('keys.whoami', { key: key.key })
    expect(who.body).toMatchObject({ id: key.keyId, remaining: 999_999_999_999 })
  })

  it('moves the balance to the new key on reroll instead of doubling it', async () => {
    const { body: old } = await post('keys.createKey', { apiId, remaining: 3 })
    await verify(old.key)
    const { body: fresh } = await post('keys.rerollKey', { keyId: old.keyId, expiration: 60_000 })
    expect(await getKey(fresh.keyId)).toMatchObject({ remaining: 2 })
    expect(await getKey(old.keyId)).toMatchObject({ remaining: 0 })
    let successes = 0
    for (let i = 0; i < 4; i++) {
      if ((await verify(old.key)).valid) successes++
      if ((await verify(fresh.key)).valid) successes++
    }
    expect(successes).toBe(2)
  })

  it('refuses a refill without credits, refillDay on a daily refill, and remaining below 1 on create', async () => {
    expect((await post('keys.createKey', { apiId, refill: { interval: 'daily', amount: 1 } })).status).toBe(400)
    expect(
      (await post('keys.createKey', { apiId, remaining: 1, refill: { interval: 'daily', amount: 1, refillDay: 3 } }))
        .status,
    ).toBe(400)
    expect((await post('keys.createKey', { apiId, remaining: 0 })).status).toBe(400)
    expect(
      (await post('keys.createKey', { apiId, remaining: 1, refill: { interval: 'weekly', amount: 1 } })).status,
    ).toBe(400)
  })

  describe('creditsLowThreshold (Keygate’s: when spending sends key.credits.low)', () => {
    const listed = async (keyId: string) => {
      const response = await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/apis.listKeys?apiId=${apiId}&limit=100`,
        headers: ADMIN_HEADERS,
      })
      return (response.json().keys as { id: string }[]).find((key) => key.id === keyId)
    }
    const thresholdOf = async (keyId: string) => (await getKey(keyId)).creditsLowThreshold

    it('is set by createKey and shown by getKey, listKeys and whoami', async () => {
      const { body: key } = await post('keys.createKey', { apiId, remaining: 100, creditsLowThreshold: 10 })
      expect(await getKey(key.keyId)).toMatchObject({ remaining: 100, creditsLowThreshold: 10 })
      expect(await listed(key.keyId)).toMatchObject({ remaining: 100, creditsLowThreshold: 10 })
      expect((await post('keys.whoami', { key: key.key })).body).toMatchObject({
        id: key.keyId,
        creditsLowThreshold: 10,
      })
      // The record itself holds it: what the verifiers cache.
      expect((await stack.backend.store.keys.getKeyById(key.keyId))?.creditsLowThreshold).toBe(10)
      const { body: plain } = await post('keys.createKey', { apiId, remaining: 100 })
      expect(await getKey(plain.keyId)).not.toHaveProperty('creditsLowThreshold')
    })

    it('is changed and cleared (null) by updateKey, and given with the credits in the same call', async () => {
      const { body: key } = await post('keys.createKey', { apiId, remaining: 100, creditsLowThreshold: 10 })
      expect((await post('keys.updateKey', { keyId: key.keyId, creditsLowThreshold: 25 })).status).toBe(200)
      expect(await thresholdOf(key.keyId)).toBe(25)
      // Left out: unchanged.
      expect((await post('keys.updateKey', { keyId: key.keyId, name: 'renamed' })).status).toBe(200)
      expect(await thresholdOf(key.keyId)).toBe(25)
      expect((await post('keys.updateKey', { keyId: key.keyId, creditsLowThreshold: null })).status).toBe(200)
      expect(await getKey(key.keyId)).not.toHaveProperty('creditsLowThreshold')
      const { body: unlimited } = await post('keys.createKey', { apiId })
      const funded = await post('keys.updateKey', { keyId: unlimited.keyId, remaining: 50, creditsLowThreshold: 5 })
      expect(funded.status).toBe(200)
      expect(await getKey(unlimited.keyId)).toMatchObject({ remaining: 50, creditsLowThreshold: 5 })
    })

    it('goes with the credits: remaining null (updateKey) or set null (updateRemaining) clears it', async () => {
      const refill = { interval: 'daily', amount: 100 }
      const { body: key } = await post('keys.createKey', { apiId, remaining: 100, refill, creditsLowThreshold: 10 })
      expect((await post('keys.updateKey', { keyId: key.keyId, remaining: null })).status).toBe(200)
      const read = await getKey(key.keyId)
      expect(read).not.toHaveProperty('remaining')
      expect(read).not.toHaveProperty('refill')
      expect(read).not.toHaveProperty('creditsLowThreshold')
      const { body: other } = await post('keys.createKey', { apiId, remaining: 100, creditsLowThreshold: 10 })
      await post('keys.updateRemaining', { keyId: other.keyId, op: 'set', value: null })
      expect(await getKey(other.keyId)).not.toHaveProperty('creditsLowThreshold')
      // Giving the credits back does not bring it back.
      await post('keys.updateRemaining', { keyId: other.keyId, op: 'set', value: 7 })
      expect(await getKey(other.keyId)).toMatchObject({ remaining: 7 })
      expect(await getKey(other.keyId)).not.toHaveProperty('creditsLowThreshold')
    })

    it('is refused (400, naming it) on a key without credits, or one losing them in the same call', async () => {
      const refused = await post('keys.createKey', { apiId, creditsLowThreshold: 10 })
      expect(refused.status).toBe(400)
      expect(refused.body.error).toMatchObject({
        code: 'BAD_REQUEST',
        message: expect.stringContaining('creditsLowThreshold'),
      })
      const { body: unlimited } = await post('keys.createKey', { apiId })
      const onUpdate = await post('keys.updateKey', { keyId: unlimited.keyId, creditsLowThreshold: 10 })
      expect(onUpdate.status).toBe(400)
      expect(onUpdate.body.error.message).toContain('creditsLowThreshold')
      expect(await getKey(unlimited.keyId)).not.toHaveProperty('creditsLowThreshold')
      const { body: funded } = await post('keys.createKey', { apiId, remaining: 100 })
      const dropping = await post('keys.updateKey', { keyId: funded.keyId, remaining: null, creditsLowThreshold: 10 })
      expect(dropping.status).toBe(400)
      expect(await getKey(funded.keyId)).toMatchObject({ remaining: 100 })
      // Clearing one on a key without credits asks for nothing.
      expect((await post('keys.updateKey', { keyId: unlimited.keyId, creditsLowThreshold: null })).status).toBe(200)
    })

    it('takes an integer from 1 to 1e12 (400 otherwise, on createKey and updateKey)', async () => {
      const { body: key } = await post('keys.createKey', { apiId, remaining: 100, creditsLowThreshold: 1 })
      for (const bad of [0, -1, 2.5, '5', 1_000_000_000_001, true]) {
        const created = await post('keys.createKey', { apiId, remaining: 100, creditsLowThreshold: bad })
        expect(created.status, `createKey ${String(bad)}`).toBe(400)
        const updated = await post('keys.updateKey', { keyId: key.keyId, creditsLowThreshold: bad })
        expect(updated.status, `updateKey ${String(bad)}`).toBe(400)
      }
      expect(await thresholdOf(key.keyId)).toBe(1)
      const highest = await post('keys.updateKey', { keyId: key.keyId, creditsLowThreshold: 1_000_000_000_000 })
      expect(highest.status).toBe(200)
      expect(await thresholdOf(key.keyId)).toBe(1_000_000_000_000)
    })

    it('is kept by a reroll, beside the balance that moves', async () => {
      const { body: old } = await post('keys.createKey', { apiId, remaining: 30, creditsLowThreshold: 3 })
      const { body: fresh } = await post('keys.rerollKey', { keyId: old.keyId, expiration: 60_000 })
      expect(await getKey(fresh.keyId)).toMatchObject({ remaining: 30, creditsLowThreshold: 3 })
    })
  })

  it('spends the forward-auth cost and reports the balance in X-Keygate-Remaining', async () => {
    const { body: key } = await post('keys.createKey', { apiId, remaining: 10 })
    const first = await stack.verifier.app.inject({
      method: 'GET',
      url: '/v1/authorize',
      headers: { 'x-api-key': key.key, 'x-keygate-cost': '4', 'x-keygate-api-id': apiId },
    })
    expect(first.statusCode).toBe(200)
    expect(first.headers['x-keygate-remaining']).toBe('6')
    await stack.verifier.app.inject({
      method: 'GET',
      url: '/v1/authorize',
      headers: { 'x-api-key': key.key, 'x-keygate-cost': '6', 'x-keygate-api-id': apiId },
    })
    const spent = await stack.verifier.app.inject({
      method: 'GET',
      url: '/v1/authorize',
      headers: { 'x-api-key': key.key, 'x-keygate-api-id': apiId },
    })
    expect(spent.statusCode).toBe(429)
    expect(spent.headers).toMatchObject({ 'x-keygate-code': 'USAGE_EXCEEDED', 'retry-after': '60' })
  })
})
