import { expect, it } from 'vitest'
import { StoreUnavailableError } from '../../shared/errors/errors.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ManualClock } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

onBothStores(
  'apis.deleteKeys, keys.whoami, keys.rerollKey',
  { clock: () => new ManualClock(Date.UTC(2026, 10, 22, 12)) },
  (stack) => {
    const clock = stack.clock!
    const { post } = stack
    const verify = async (key: string) => stack.verify({ key })
    const newApi = async () => (await post('apis.createApi', { name: 'ops' })).body.apiId as string

    it('deleteKeys removes every key of an api (more than a page) and keeps the api', async () => {
      const apiId = await newApi()
      const keys: { key: string; keyId: string }[] = []
      for (let i = 0; i < 105; i++) keys.push((await post('keys.createKey', { apiId })).body)
      expect((await verify(keys[104]!.key)).valid).toBe(true)
      expect(await post('apis.deleteKeys', { apiId })).toMatchObject({ status: 200, body: { deletedKeys: 105 } })
      await waitFor(
        async () => (await verify(keys[104]!.key)).code === 'NOT_FOUND',
        'the delete to reach the stack.verifier',
        2_000,
        2,
      )
      expect((await verify(keys[0]!.key)).code).toBe('NOT_FOUND')
      const api = await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/apis.getApi?apiId=${apiId}`,
        headers: ADMIN_HEADERS,
      })
      expect(api.statusCode).toBe(200)
      expect((await post('apis.deleteKeys', { apiId })).body).toEqual({ deletedKeys: 0 })
      expect((await post('apis.deleteKeys', { apiId: 'api_missing' })).status).toBe(404)
    })

    it('whoami finds a key by its plaintext, for a root key allowed to read it', async () => {
      const apiId = await newApi()
      const { body: created } = await post('keys.createKey', {
        apiId,
        name: 'support',
        externalId: 'acme',
        meta: { plan: 'pro' },
      })
      expect(await post('keys.whoami', { key: created.key })).toMatchObject({
        status: 200,
        body: {
          id: created.keyId,
          name: 'support',
          meta: { plan: 'pro' },
          enabled: true,
          createdAt: clock.now(),
          identity: { externalId: 'acme' },
        },
      })
      expect((await post('keys.whoami', { key: 'sk_unknown_000000000' })).status).toBe(404)
      const { key: other, hash } = generateRootKey()
      await stack.backend.store.rootKeys.createRootKey({
        id: newId('root'),
        hash,
        permissions: ['api.api_elsewhere.read_key'],
        createdAt: Date.now(),
      })
      expect(
        (
          await post('keys.whoami', { key: created.key }, stack.controlPlane, {
            ...ADMIN_HEADERS,
            authorization: `Bearer ${other}`,
          })
        ).status,
      ).toBe(403)
    })

    it('rerollKey issues a new key with the same settings; the old one expires after the grace period', async () => {
      const apiId = await newApi()
      const { body: old } = await post('keys.createKey', {
        apiId,
        prefix: 'sk',
        name: 'rotating',
        externalId: 'acme',
        meta: { a: 1 },
        permissions: ['p'],
        environment: 'live',
      })
      const { status, body: fresh } = await post('keys.rerollKey', { keyId: old.keyId, expiration: 60_000 })
      expect(status).toBe(200)
      expect(fresh.keyId).not.toBe(old.keyId)
      expect(fresh.key).toMatch(/^sk_/)
      const read = (
        await stack.controlPlane.app.inject({
          method: 'GET',
          url: `/v1/keys.getKey?keyId=${fresh.keyId}`,
          headers: ADMIN_HEADERS,
        })
      ).json()
      expect(read).toMatchObject({
        apiId,
        name: 'rotating',
        ownerId: 'acme',
        meta: { a: 1 },
        permissions: ['p'],
        environment: 'live',
        enabled: true,
      })
      expect(read).not.toHaveProperty('expires')
      await waitFor(
        async () => (await verify(old.key)).expires === clock.now() + 60_000,
        'the grace period to reach the stack.verifier',
        2_000,
        2,
      )
      expect((await verify(old.key)).valid).toBe(true)
      expect((await verify(fresh.key)).valid).toBe(true)
      clock.advance(60_000)
      expect(await verify(old.key)).toMatchObject({ valid: false, code: 'EXPIRED' })
      expect((await verify(fresh.key)).valid).toBe(true)

      // Without a grace period the old key stops at once.
      const { body: next } = await post('keys.rerollKey', { keyId: fresh.keyId })
      await waitFor(async () => (await verify(fresh.key)).code === 'EXPIRED', 'the immediate expiry', 2_000, 2)
      expect((await verify(next.key)).valid).toBe(true)
      expect((await post('keys.rerollKey', { keyId: 'key_missing' })).status).toBe(404)
    })

    it('rerollKey is undone when it fails half-way: the old key deleted meanwhile (404), or the store failing', async () => {
      const apiId = await newApi()
      const keys = stack.backend.store.keys
      const createKey = keys.createKey.bind(keys)
      const updateKey = keys.updateKey.bind(keys)
      const listed = async () =>
        (
          await stack.controlPlane.app.inject({ url: `/v1/apis.listKeys?apiId=${apiId}`, headers: ADMIN_HEADERS })
        ).json().keys as { id: string }[]
      const { body: deleted } = await post('keys.createKey', { apiId, remaining: 50 })
      // Deleted once the roll has written its new key: the roll leaves nothing of itself, not a copy of a deleted key.
      keys.createKey = async (record) => {
        const written = await createKey(record)
        if (record.rerolledFrom === deleted.keyId) await post('keys.deleteKey', { keyId: deleted.keyId })
        return written
      }
      try {
        expect((await post('keys.rerollKey', { keyId: deleted.keyId, expiration: 60_000 })).status).toBe(404)
      } finally {
        keys.createKey = createKey
      }
      expect(await listed()).toEqual([])

      const { body: kept } = await post('keys.createKey', { apiId, remaining: 50 })
      keys.updateKey = async (keyId, ...rest) => {
        if (keyId === kept.keyId) throw new StoreUnavailableError('the store went away for a moment')
        return updateKey(keyId, ...rest)
      }
      try {
        expect((await post('keys.rerollKey', { keyId: kept.keyId, expiration: 60_000 })).status).toBe(503)
      } finally {
        keys.updateKey = updateKey
      }
      expect((await listed()).map((key) => key.id)).toEqual([kept.keyId])
      expect((await verify(kept.key)).remaining).toBe(49)
    })
  },
)
