import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey, generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'

/**
 * v2's keys.migrateKeys through Unkey's SDK: keys by their SHA-256 (base64), each stored or answered in `failed`;
 * a migrated key verifies with its plaintext through v1's verifyKey on a separate verifier.
 */
onBothStores('v2 keys.migrateKeys', {}, (stack) => {
  const sdk = () => unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
  const newApi = async () => (await stack.post('apis.createApi', { name: 'migrations' })).body.apiId as string
  const plaintext = () => generateKey('mig').key
  const stored = (hash: string) => stack.backend.store.keys.getKeyByHash(hash)
  const migrate = async (payload: object, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({
      method: 'POST',
      url: '/v2/keys.migrateKeys',
      headers,
      payload,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const nested = (levels: number): Record<string, unknown> =>
    levels === 1 ? { leaf: 1 } : { next: nested(levels - 1) }
  const rootKey = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return key
  }

  describe('200', () => {
    it('stores each key by its hash; its plaintext verifies through v1 verifyKey', async () => {
      const apiId = await newApi()
      const [first, second] = [plaintext(), plaintext()]
      const externalId = `user_${randomUUID()}`
      const { data } = await sdk().keys.migrateKeys({
        migrationId: 'from_unkey',
        apiId,
        keys: [
          { hash: hashKey(first), name: 'first', externalId, meta: { plan: 'pro' } },
          { hash: hashKey(second), enabled: false },
        ],
      })
      expect(data.failed).toEqual([])
      expect(data.migrated).toEqual([
        { hash: hashKey(first), keyId: expect.stringMatching(/^key_/) },
        { hash: hashKey(second), keyId: expect.stringMatching(/^key_/) },
      ])
      expect(await stack.verify({ key: first, apiId })).toMatchObject({
        valid: true,
        keyId: data.migrated[0]!.keyId,
        name: 'first',
        ownerId: externalId,
        meta: { plan: 'pro' },
        identity: { externalId },
      })
      expect(await stack.verify({ key: second, apiId })).toMatchObject({ valid: false, code: 'DISABLED' })
      expect(await stack.getKey(data.migrated[1]!.keyId)).toMatchObject({ apiId, start: '', enabled: false })
    })

    it('takes credits, rate limits, permissions and roles as keys.createKey does', async () => {
      const apiId = await newApi()
      const key = plaintext()
      const [permission, role] = [`docs.${randomUUID().slice(0, 8)}`, `editor.${randomUUID().slice(0, 8)}`]
      const { data } = await sdk().keys.migrateKeys({
        migrationId: 'from_unkey',
        apiId,
        keys: [
          {
            hash: hashKey(key),
            credits: { remaining: 2, refill: { interval: 'daily', amount: 2 } },
            ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }],
            permissions: [permission],
            roles: [role],
          },
        ],
      })
      const keyId = data.migrated[0]!.keyId
      expect(await stack.getKey(keyId)).toMatchObject({
        remaining: 2,
        refill: { interval: 'daily', amount: 2 },
        ratelimits: [{ name: 'requests', limit: 10, duration: 60_000, autoApply: true }],
        permissions: [permission],
        roles: [role],
      })
      expect(await stack.verify({ key, authorization: { permissions: permission } })).toMatchObject({
        valid: true,
        remaining: 1,
      })
      expect(await stack.verify({ key })).toMatchObject({ valid: true, remaining: 0 })
      expect(await stack.verify({ key })).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' })
    })

    it('a hash stored already, or twice in the call, is answered in failed and never stored twice', async () => {
      const apiId = await newApi()
      const existing = await stack.post('keys.createKey', { apiId })
      const [fresh, again] = [plaintext(), plaintext()]
      await sdk().keys.migrateKeys({ migrationId: 'mig_1', apiId, keys: [{ hash: hashKey(again) }] })
      const before = (await stored(hashKey(again)))!.id
      const { data } = await sdk().keys.migrateKeys({
        migrationId: 'mig_2',
        apiId,
        keys: [
          { hash: hashKey(existing.body.key) },
          { hash: hashKey(fresh), name: 'the first' },
          { hash: hashKey(again) },
          { hash: hashKey(fresh), name: 'the second' },
        ],
      })
      expect(data.migrated).toEqual([{ hash: hashKey(fresh), keyId: expect.stringMatching(/^key_/) }])
      expect(data.failed).toEqual([hashKey(existing.body.key), hashKey(again), hashKey(fresh)])
      expect(await stored(hashKey(fresh))).toMatchObject({ id: data.migrated[0]!.keyId, name: 'the first' })
      expect((await stored(hashKey(again)))!.id).toBe(before)
      expect((await stack.verify({ key: existing.body.key })).keyId).toBe(existing.body.keyId)
      const listed = await stack.controlPlane.app.inject({
        url: `/v1/apis.listKeys?apiId=${apiId}`,
        headers: ADMIN_HEADERS,
      })
      expect(listed.json().keys).toHaveLength(3)
    })

    it('every key failed: migrated is [] and failed lists them (never null)', async () => {
      const apiId = await newApi()
      const hash = hashKey(plaintext())
      await sdk().keys.migrateKeys({ migrationId: 'first', apiId, keys: [{ hash }] })
      const { body } = await migrate({ migrationId: 'second', apiId, keys: [{ hash }] })
      expect(body.data).toEqual({ migrated: [], failed: [hash] })
    })

    it('a hash another writer stores meanwhile is answered in failed; the other keys are stored', async () => {
      const apiId = await newApi()
      const hashes = Array.from({ length: 3 }, () => hashKey(plaintext()))
      const store = stack.backend.store
      const createKey = store.keys.createKey.bind(store.keys)
      let calls = 0
      // Another writer stores the second key's hash between the duplicate check and the write.
      store.keys.createKey = async (record) => {
        if (++calls === 2) await createKey({ ...record, id: newId('key') })
        return createKey(record)
      }
      try {
        const { data } = await sdk().keys.migrateKeys({
          migrationId: 'race',
          apiId,
          keys: hashes.map((hash) => ({ hash })),
        })
        expect(data.migrated.map((m) => m.hash)).toEqual([hashes[0], hashes[2]])
        expect(data.failed).toEqual([hashes[1]])
      } finally {
        store.keys.createKey = createKey
      }
    })

    it('records migrationId in the audit entry of each key', async () => {
      const apiId = await newApi()
      const { data } = await sdk().keys.migrateKeys({
        migrationId: 'acme_2025',
        apiId,
        keys: [{ hash: hashKey(plaintext()) }],
      })
      const audit = await stack.controlPlane.app.inject({ url: '/v1/audit.list', headers: ADMIN_HEADERS })
      expect(audit.json().entries[0]).toMatchObject({
        action: 'keys.migrateKeys',
        apiId,
        keyId: data.migrated[0]!.keyId,
        context: { migrationId: 'acme_2025' },
      })
      expect(JSON.stringify(audit.json().entries[0])).not.toContain(data.migrated[0]!.hash)
    })
  })

  describe('errors', () => {
    it('a store failure part-way deletes the keys the call wrote, and answers the error', async () => {
      const apiId = await newApi()
      const hashes = Array.from({ length: 3 }, () => hashKey(plaintext()))
      const store = stack.backend.store
      const createKey = store.keys.createKey.bind(store.keys)
      let calls = 0
      store.keys.createKey = async (record) => {
        if (++calls === 3) throw new Error('the store went away')
        return createKey(record)
      }
      try {
        expect((await migrate({ migrationId: 'broken', apiId, keys: hashes.map((hash) => ({ hash })) })).status).toBe(
          500,
        )
      } finally {
        store.keys.createKey = createKey
      }
      for (const hash of hashes) expect(await stored(hash)).toBeNull()
    })

    it.each([
      ['a hash that is not SHA-256 in base64', { hash: 'a'.repeat(64) }, 'body.keys.1.hash'],
      ['a field Unkey does not have', { hash: hashKey('x'), prefix: 'sk' }, 'body.keys.1.prefix'],
      [
        'refill without remaining',
        { hash: hashKey('x'), credits: { remaining: null, refill: { interval: 'daily', amount: 1 } } },
        'body.keys.1.credits.refill',
      ],
      ['an expiry in the past', { hash: hashKey('x'), expires: Date.UTC(2020, 0, 1) }, 'body.keys.1.expires'],
      ['meta nested too deep', { hash: hashKey('x'), meta: nested(17) }, 'body.keys.1.meta'],
    ])('%s: 400 locating it, and no key of the call is stored', async (_, key, location) => {
      const apiId = await newApi()
      const good = hashKey(plaintext())
      const { status, body } = await migrate({ migrationId: 'bad', apiId, keys: [{ hash: good }, key] })
      expect(status, JSON.stringify(body)).toBe(400)
      expect(body.error.errors).toEqual([{ location, message: expect.any(String) }])
      expect(await stored(good)).toBeNull()
    })

    it.each([
      [{ apiId: 'api_x', keys: [{ hash: hashKey('x') }] }, 'body.migrationId'],
      [{ migrationId: 'm', apiId: 'api_x', keys: [{ hash: hashKey('x') }] }, 'body.migrationId'],
      [{ migrationId: 'mig', apiId: 'api_x', keys: [] }, 'body.keys'],
    ])('%j: 400 at %s', async (payload, location) => {
      const { status, body } = await migrate(payload)
      expect(status).toBe(400)
      expect(body.error.errors).toContainEqual(expect.objectContaining({ location }))
    })

    it('401 for an unknown root key', async () => {
      await expect(
        unkeySdk(stack.controlPlane, 'unknown').keys.migrateKeys({
          migrationId: 'x',
          apiId: 'api_x',
          keys: [{ hash: 'abc' }],
        }),
      ).rejects.toMatchObject({ name: 'UnauthorizedErrorResponse' })
    })

    it('403 without create_key on the api, whatever else the root key may do; with it, the keys are stored', async () => {
      const apiId = await newApi()
      const hash = hashKey(plaintext())
      for (const permissions of [['api.*.update_key', 'rbac.*.*'], ['api.api_other.create_key']]) {
        const call = unkeySdk(stack.controlPlane, await rootKey(permissions)).keys.migrateKeys({
          migrationId: 'denied',
          apiId,
          keys: [{ hash }],
        })
        await expect(call).rejects.toMatchObject({ name: 'ForbiddenErrorResponse', data$: { error: { status: 403 } } })
      }
      expect(await stored(hash)).toBeNull()
      const allowed = unkeySdk(stack.controlPlane, await rootKey([`api.${apiId}.create_key`]))
      expect((await allowed.keys.migrateKeys({ migrationId: 'allowed', apiId, keys: [{ hash }] })).data.failed).toEqual(
        [],
      )
    })

    it('403 when a key names a missing permission and the root key may not make it: nothing stored', async () => {
      const apiId = await newApi()
      const good = hashKey(plaintext())
      const missing = `missing.${randomUUID().slice(0, 8)}`
      const call = unkeySdk(stack.controlPlane, await rootKey(['api.*.create_key'])).keys.migrateKeys({
        migrationId: 'perm',
        apiId,
        keys: [{ hash: good }, { hash: hashKey(plaintext()), permissions: [missing] }],
      })
      await expect(call).rejects.toMatchObject({ name: 'ForbiddenErrorResponse' })
      expect(await stored(good)).toBeNull()
      expect(await stack.backend.store.entities.readName('permission', missing)).toBeNull()
    })

    it('403 for a role the root key may not make: no permission any key of the call named is made', async () => {
      const apiId = await newApi()
      const [first, second, role] = [
        `made.${randomUUID().slice(0, 8)}`,
        `made.${randomUUID().slice(0, 8)}`,
        `role-${randomUUID()}`,
      ]
      const call = unkeySdk(stack.controlPlane, await rootKey(['api.*.create_key', 'rbac.*.create_permission'])).keys
      // A later key's role, and a key's own role (its permissions are resolved first).
      for (const keys of [
        [
          { hash: hashKey(plaintext()), permissions: [first] },
          { hash: hashKey(plaintext()), roles: [role] },
        ],
        [{ hash: hashKey(plaintext()), permissions: [second], roles: [role] }],
      ]) {
        await expect(call.migrateKeys({ migrationId: 'roles', apiId, keys })).rejects.toMatchObject({
          name: 'ForbiddenErrorResponse',
        })
      }
      for (const slug of [first, second])
        expect(await stack.backend.store.entities.readName('permission', slug)).toBeNull()
      expect(await stack.backend.store.entities.readName('role', role)).toBeNull()
    })

    it('meta too large and a limit named twice are 400 locating the key, as keys.createKey answers them', async () => {
      const apiId = await newApi()
      const limit = { name: 'requests', limit: 1, duration: 60_000 }
      for (const key of [{ meta: { blob: 'x'.repeat(70_000) } }, { ratelimits: [limit, limit] }]) {
        const { status, body } = await migrate({
          migrationId: 'v2-400',
          apiId,
          keys: [{ hash: hashKey(plaintext()), ...key }],
        })
        expect(status).toBe(400)
        expect(body.error.type).toBe('https://unkey.com/docs/errors/unkey/application/invalid_input')
        expect(body.error.errors[0].location).toMatch(/^body\.keys\.0/)
      }
    })

    it("checks in order: create_key, the api (404), each key's hash and fields, then the identities' rights", async () => {
      const badHash = { hash: 'not-a-sha256' }
      expect((await migrate({ migrationId: 'order', apiId: newId('api'), keys: [badHash] })).status).toBe(404)
      const apiId = await newApi()
      const creator = `Bearer ${await rootKey([`api.${apiId}.create_key`])}`
      const headers = { ...ADMIN_HEADERS, authorization: creator }
      const refused = await migrate(
        { migrationId: 'order', apiId, keys: [{ ...badHash, externalId: randomUUID() }] },
        headers,
      )
      expect(refused.status).toBe(400)
      expect(refused.body.error.errors[0].location).toBe('body.keys.0.hash')
    })

    it('404 for an api that does not exist', async () => {
      await expect(
        sdk().keys.migrateKeys({ migrationId: 'mig_x', apiId: newId('api'), keys: [{ hash: hashKey('x') }] }),
      ).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
      })
    })
  })
})
