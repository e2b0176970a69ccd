import { describe, expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import type { ApiKeyStore } from '../../shared/store/api-keys/api-key-store.js'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, JSON_ONLY, onBothStores } from '../support/both-stores.js'

type Answer = { status: number; body: any; raw: string }
type NewKey = { keyId: string; key: string }

/**
 * A key's life through the portal's rolls (docs/portal.md), on both stores: the key a roll replaces is deleted, at once
 * or once its overlap has ended, so that however often a customer rolls, their listings and counts hold only the keys
 * they hold, and every call reads a bounded number of pages; rolls of one key at once, or a roll and a revoke, leave
 * one outcome; a roll that fails half-way is undone. The clock is the test's, so that overlaps end when it says.
 */
onBothStores('portal rolls', { clock: () => new ManualClock(Date.now()), analytics: true }, (stack) => {
  const v2 = async (operation: string, payload: object, headers = ADMIN_HEADERS): Promise<Answer> => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json(), raw: response.body }
  }
  let portals = 0
  /** A portal on a new api, and a signed-in session of `externalId` with every scope: its headers. */
  const customer = async (externalId: string, fields: object = {}) => {
    const apiId = (await v2('apis.createApi', { name: 'rolls' })).body.data.apiId as string
    const slug = `rolls-${++portals}-${stack.store}`
    const portal = await v2('portal.createPortal', { slug, name: 'Keys', apiIds: [apiId], ...fields })
    expect(portal.status, portal.raw).toBe(200)
    const scopes = ['keys:read', 'keys:create', 'keys:reroll', 'keys:revoke', 'analytics:read']
    const minted = await v2('portal.createSession', { portal: slug, externalId, scopes })
    const code = new URL(minted.body.data.url as string).searchParams.get('code')!
    const exchanged = await stack.controlPlane.app.inject({
      method: 'POST',
      url: '/v2/portal.exchangeCode',
      headers: JSON_ONLY,
      payload: { code },
    })
    const cookie = String(exchanged.headers['set-cookie']).split(';')[0]!
    const headers = { ...JSON_ONLY, cookie }
    return {
      apiId,
      call: (operation: string, payload: object = {}) => v2(`portal.${operation}`, payload, headers),
      create: async () => {
        const created = await v2('portal.createKey', {}, headers)
        expect(created.status, created.raw).toBe(200)
        return created.body.data as NewKey
      },
      listed: async () => {
        const list = await v2('portal.listKeys', {}, headers)
        expect(list.status, list.raw).toBe(200)
        return (list.body.data as { keyId: string }[]).map((key) => key.keyId).sort()
      },
    }
  }
  /** Keys of the api stored for `externalId`, as a root key lists them (a key the portal no longer shows included). */
  const stored = async (apiId: string, externalId: string) => {
    const listed = await v2('apis.listKeys', { apiId, externalId, limit: 100 })
    expect(listed.status, listed.raw).toBe(200)
    return (listed.body.data as { keyId: string }[]).map((key) => key.keyId).sort()
  }
  const credits = async (keyId: string) => (await stack.getKey(keyId)).remaining as number | undefined
  /** Replaces one method of the store's keys part until `restore()`: a fault, or a count, on the real store. */
  const replacing = <M extends keyof ApiKeyStore>(method: M, replacement: (own: ApiKeyStore[M]) => ApiKeyStore[M]) => {
    const keys = stack.backend.store.keys
    const own = keys[method]
    keys[method] = replacement(own.bind(keys) as ApiKeyStore[M])
    return { restore: () => void (keys[method] = own) }
  }
  const audited = async (action: string, keyId: string) => {
    const audit = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/audit.list?action=${action}&keyId=${keyId}`,
      headers: ADMIN_HEADERS,
    })
    return audit.json().entries as { portalSession?: object; before?: object }[]
  }

  describe('the key a roll replaces', () => {
    it('works through the overlap and is listed, then is deleted: in no listing, gone from the store, its usage kept', async () => {
      const { apiId, call, create, listed } = await customer('overlapper')
      const old = await create()
      const rolled = await call('rerollKey', { keyId: old.keyId, expiration: 60_000 })
      expect(rolled.status, rolled.raw).toBe(200)
      const fresh = rolled.body.data as NewKey
      expect(await listed()).toEqual([old.keyId, fresh.keyId].sort())
      expect((await stack.verify({ key: old.key })).valid).toBe(true)

      stack.clock!.advance(60_000)
      // Ended: the portal lists it no more, before anything has deleted it; its verification stays the customer's.
      await stack.ingestAnalytics()
      const ended = await call('getVerifications', {
        keyId: old.keyId,
        startTime: stack.clock!.now() - 3_600_000,
        endTime: stack.clock!.now(),
      })
      expect(ended.status, ended.raw).toBe(200)
      expect(ended.body.data.reduce((sum: number, point: { valid: number }) => sum + point.valid, 0)).toBe(1)
      expect(await listed()).toEqual([fresh.keyId])
      expect(await stored(apiId, 'overlapper')).toEqual([fresh.keyId])
      expect((await v2('keys.getKey', { keyId: old.keyId })).status).toBe(404)
      expect((await stack.verify({ key: old.key })).valid).toBe(false)
      const [deleted] = await audited('portal.deleteRolledKey', old.keyId)
      expect(deleted?.portalSession).toMatchObject({ externalId: 'overlapper' })
      expect(deleted?.before).toMatchObject({ id: old.keyId })
    })

    it('is rolled once: a second roll of it is a 409 while its replacement stands, and it can still be revoked', async () => {
      const { call, create, listed } = await customer('twice_roller')
      const old = await create()
      const first = await call('rerollKey', { keyId: old.keyId, expiration: 60_000 })
      expect(first.status, first.raw).toBe(200)
      for (const expiration of [60_000, 0]) {
        const again = await call('rerollKey', { keyId: old.keyId, expiration })
        expect(again.status, again.raw).toBe(409)
        expect(again.body.error.detail).toBe(
          'this key was rolled already: roll the key that replaced it, or revoke this one',
        )
      }
      expect(await listed()).toEqual([old.keyId, first.body.data.keyId].sort())
      // Its replacement revoked, the old key is the customer's one key again: it may be rolled.
      expect((await call('revokeKey', { keyId: first.body.data.keyId })).status).toBe(200)
      const rerolled = await call('rerollKey', { keyId: old.keyId, expiration: 0 })
      expect(rerolled.status, rerolled.raw).toBe(200)
      expect(await listed()).toEqual([rerolled.body.data.keyId])
    })

    it('1,005 rolls with an overlap leave the listing the keys held, and each call reads a bounded number of pages', async () => {
      // Five keys rolled 201 times each, side by side, each overlap (1 ms) over before the next roll.
      const { apiId, call, create, listed } = await customer('hourly_roller')
      const chains = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const first = await create()
          let held = first
          for (let roll = 1; roll <= 201; roll++) {
            const rolled = await call('rerollKey', { keyId: held.keyId, expiration: 1 })
            expect(rolled.status, `roll ${roll}: ${rolled.raw}`).toBe(200)
            held = rolled.body.data as NewKey
            stack.clock!.advance(2)
          }
          return { first, held }
        }),
      )
      const holding = chains.map((chain) => chain.held.keyId).sort()
      let pages = 0
      const counting = replacing('listKeys', (listKeys) => (apiId, options) => {
        pages++
        return listKeys(apiId, options)
      })
      try {
        expect(await listed()).toEqual(holding)
        expect(pages).toBeLessThanOrEqual(1)
        pages = 0
        await create()
        expect(pages).toBeLessThanOrEqual(2)
      } finally {
        counting.restore()
      }
      expect(await stored(apiId, 'hourly_roller')).toHaveLength(6)
      expect((await v2('keys.getKey', { keyId: chains[0]!.first.keyId })).status).toBe(404)
      expect((await stack.verify({ key: chains[0]!.held.key })).valid).toBe(true)
    }, 120_000)

    it('is deleted at most 100 at a time, those beyond unseen until a later call deletes them', async () => {
      const { apiId, call, create, listed } = await customer('bulk_roller', { maxKeysPerIdentity: 1_000 })
      let held = await create()
      for (let roll = 0; roll < 150; roll++) {
        const rolled = await call('rerollKey', { keyId: held.keyId, expiration: 60_000 })
        expect(rolled.status, rolled.raw).toBe(200)
        held = rolled.body.data as NewKey
      }
      stack.clock!.advance(60_000)
      expect(await listed()).toEqual([held.keyId])
      expect(await stored(apiId, 'bulk_roller')).toHaveLength(51)
      expect(await listed()).toEqual([held.keyId])
      expect(await stored(apiId, 'bulk_roller')).toEqual([held.keyId])
    }, 60_000)
  })

  describe('rolls at once', () => {
    it('of one key: one wins and holds its credits, the other is undone (no second live key from one)', async () => {
      const { call, create, listed } = await customer('twin_roller', { keyDefaults: { credits: { remaining: 50 } } })
      for (const expiration of [0, 60_000, 0, 60_000]) {
        const old = await create()
        const rolls = await Promise.all([1, 2].map(() => call('rerollKey', { keyId: old.keyId, expiration })))
        const won = rolls.filter((roll) => roll.status === 200)
        expect(won, rolls.map((roll) => roll.raw).join('\n')).toHaveLength(1)
        const lost = rolls.find((roll) => roll.status !== 200)!
        expect([404, 409], lost.raw).toContain(lost.status)
        const fresh = won[0]!.body.data as NewKey
        expect(await listed()).toEqual(expiration === 0 ? [fresh.keyId] : [old.keyId, fresh.keyId].sort())
        expect(await credits(fresh.keyId)).toBe(50)
        expect((await stack.verify({ key: fresh.key })).valid).toBe(true)
        for (const keyId of await listed()) expect((await call('revokeKey', { keyId })).status).toBe(200)
      }
    })

    /** Runs `between` once the roll of `keyId` has written its new key, before it goes on. */
    const halfWay = (keyId: string, between: () => Promise<unknown>) =>
      replacing('createKey', (createKey) => async (record) => {
        const written = await createKey(record)
        if (record.rerolledFrom === keyId) await between()
        return written
      })

    it('of one key, the second made while the first is half-way: the first is undone', async () => {
      const { call, create, listed } = await customer('overtaken_roller', {
        keyDefaults: { credits: { remaining: 50 } },
      })
      for (const [expiration, refusal] of [
        [0, 404],
        [60_000, 409],
      ] as const) {
        const old = await create()
        let second: Answer | undefined
        const overtaking = halfWay(old.keyId, async () => {
          overtaking.restore()
          second = await call('rerollKey', { keyId: old.keyId, expiration })
        })
        const first = await call('rerollKey', { keyId: old.keyId, expiration }).finally(overtaking.restore)
        expect(second?.status, second?.raw).toBe(200)
        expect(first.status, first.raw).toBe(refusal)
        const fresh = second!.body.data as NewKey
        expect(await listed()).toEqual(expiration === 0 ? [fresh.keyId] : [old.keyId, fresh.keyId].sort())
        expect(await credits(fresh.keyId)).toBe(50)
        for (const keyId of await listed()) expect((await call('revokeKey', { keyId })).status).toBe(200)
      }
    })

    /** Runs `between` once the roll of `keyId` has claimed it, as it takes its credits. */
    const claimed = (keyId: string, between: () => Promise<unknown>) =>
      replacing('updateCredits', (updateCredits) => async (id, op, ...rest) => {
        if (id === keyId && op === 'take') await between()
        return updateCredits(id, op, ...rest)
      })

    it('of a key revoked while the roll is half-way, before or after its claim: the roll is undone, no copy left', async () => {
      const { apiId, call, create } = await customer('racing_revoker', { keyDefaults: { credits: { remaining: 50 } } })
      for (const at of [halfWay, claimed]) {
        for (const expiration of [0, 60_000]) {
          const old = await create()
          let revoke: Answer | undefined
          const revoking = at(old.keyId, async () => (revoke = await call('revokeKey', { keyId: old.keyId })))
          const roll = await call('rerollKey', { keyId: old.keyId, expiration }).finally(revoking.restore)
          expect(revoke?.status, revoke?.raw).toBe(200)
          expect(roll.status, roll.raw).toBe(404)
          expect(await stored(apiId, 'racing_revoker')).toEqual([])
        }
      }
    })
  })

  describe('a roll that fails half-way', () => {
    it('without overlap, its delete failing: undone, the customer holding the old key and its credits', async () => {
      const { call, create, listed } = await customer('unlucky_roller', { keyDefaults: { credits: { remaining: 50 } } })
      const old = await create()
      const failing = replacing('deleteKey', (deleteKey) => async (keyId) => {
        if (keyId === old.keyId) throw new StoreUnavailableError('the store went away for a moment')
        return deleteKey(keyId)
      })
      try {
        const roll = await call('rerollKey', { keyId: old.keyId, expiration: 0 })
        expect(roll.status, roll.raw).toBe(503)
      } finally {
        failing.restore()
      }
      expect(await listed()).toEqual([old.keyId])
      expect(await credits(old.keyId)).toBe(50)
      expect((await stack.verify({ key: old.key })).remaining).toBe(49)
      // Nothing of the failed roll holds the key: it rolls as any other.
      const again = await call('rerollKey', { keyId: old.keyId, expiration: 0 })
      expect(again.status, again.raw).toBe(200)
      expect(await credits(again.body.data.keyId)).toBe(49)
    })

    it('with an overlap, its expiry failing: undone, the old key as it was, and kept as any key once it expires', async () => {
      const { apiId, call, create, listed } = await customer('unlucky_overlapper', {
        keyDefaults: { credits: { remaining: 50 }, expiresInMs: 3_600_000 },
      })
      const old = await create()
      const expires = (await stack.getKey(old.keyId)).expires as number
      const failing = replacing('updateKey', (updateKey) => async (keyId, patch, ...rest) => {
        if (keyId === old.keyId && patch.expires !== undefined) throw new StoreUnavailableError('gone for a moment')
        return updateKey(keyId, patch, ...rest)
      })
      try {
        const roll = await call('rerollKey', { keyId: old.keyId, expiration: 60_000 })
        expect(roll.status, roll.raw).toBe(503)
      } finally {
        failing.restore()
      }
      expect(await listed()).toEqual([old.keyId])
      expect(await stack.getKey(old.keyId)).toMatchObject({ remaining: 50, expires })
      // Not a key the portal rolled away: once it expires, it stays, listed as expired, as any expired key does.
      stack.clock!.advance(3_600_000)
      expect(await listed()).toEqual([old.keyId])
      expect(await stored(apiId, 'unlucky_overlapper')).toEqual([old.keyId])
    })
  })
})
