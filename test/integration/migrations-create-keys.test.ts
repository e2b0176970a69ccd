import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateKey, generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { grantsOn } from '../support/rbac.js'
import { metric } from '../support/server-probes.js'

/**
 * migrations.createKeys: importing keys that exist elsewhere, by plaintext or by SHA-256 hash. Organised as
 * Unkey's v1 tests of the operation are (happy, error, security); the imported keys are verified through a
 * separate verifier.
 */
onBothStores('migrations.createKeys', {}, (stack) => {
  const newApi = async () => (await stack.post('apis.createApi', { name: 'imports' })).body.apiId as string
  const someHash = () => hashKey(randomUUID())
  const byHash = (apiId: string, hash = someHash(), more: object = {}) => ({
    apiId,
    hash: { value: hash, variant: 'sha256_base64' },
    ...more,
  })
  const importKeys = (keys: unknown, auth?: Record<string, string>) =>
    stack.post('migrations.createKeys', keys as object, undefined, auth)
  const stored = (hash: string) => stack.backend.store.keys.getKeyByHash(hash)
  const rootKey = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  }

  describe('happy', () => {
    it('imports a key by its hash: the hash is stored as given, with the start given, enabled by default', async () => {
      const apiId = await newApi()
      const hash = someHash()
      const { status, body } = await importKeys([byHash(apiId, hash, { start: 'start_' })])
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.keyIds).toHaveLength(1)
      const record = await stored(hash)
      expect(record).toMatchObject({ id: body.keyIds[0], apiId, start: 'start_', enabled: true })
      expect(await stack.getKey(body.keyIds[0])).not.toHaveProperty('hash')
    })

    it.each([true, false])('keeps enabled: %s', async (enabled) => {
      const apiId = await newApi()
      const hash = someHash()
      expect((await importKeys([byHash(apiId, hash, { enabled })])).status).toBe(200)
      expect((await stored(hash))?.enabled).toBe(enabled)
    })

    it('binds the key to its externalId and that externalId’s identity (made when missing)', async () => {
      const apiId = await newApi()
      const key = generateKey('acme').key
      const externalId = `user_${randomUUID()}`
      const { body } = await importKeys([{ apiId, plaintext: key, externalId }])
      expect((await stack.getKey(body.keyIds[0])).ownerId).toBe(externalId)
      expect(await stack.verify({ key, apiId })).toMatchObject({ valid: true, ownerId: externalId })
      // Its identity is made as keys.createKey makes one (Unkey's upsert), and verifyKey answers it.
      const identity = (await stack.getKey(body.keyIds[0])).identity
      expect(identity).toMatchObject({ id: expect.stringMatching(/^id_/), externalId })
      expect((await stack.verify({ key, apiId })).identity).toMatchObject({ id: identity.id, externalId })
    })

    it('takes roles, permissions, environment, meta, credits and a rate limit as keys.createKey does', async () => {
      const apiId = await newApi()
      const key = generateKey(undefined).key
      const fields = {
        permissions: ['documents.read', 'documents.write', 'documents.read'],
        roles: ['r2', 'r1'],
        environment: 'test',
        meta: { plan: 'pro' },
        remaining: 10,
        refill: { interval: 'monthly', amount: 100 },
        creditsLowThreshold: 5,
        ratelimit: { type: 'consistent', limit: 5, refillRate: 5, refillInterval: 60_000 },
      }
      const imported = await importKeys([{ apiId, plaintext: key, ...fields }])
      const created = await stack.post('keys.createKey', { apiId, ...fields })
      const shown = (record: Record<string, unknown>) => {
        const { id: _id, start: _start, createdAt: _createdAt, ...rest } = record
        return rest
      }
      expect(shown(await stack.getKey(imported.body.keyIds[0]))).toEqual(shown(await stack.getKey(created.body.keyId)))
      expect(await stack.getKey(imported.body.keyIds[0])).toMatchObject({ remaining: 10, creditsLowThreshold: 5 })
      expect(await stack.verify({ key, authorization: { permissions: 'documents.write' } })).toMatchObject({
        valid: true,
        environment: 'test',
        roles: ['r1', 'r2'],
        remaining: 9,
      })
    })

    it('two keys naming the same missing permission and role get the one record of each, made once', async () => {
      const apiId = await newApi()
      const [first, second] = [someHash(), someHash()]
      const [permission, role] = [`import.${randomUUID()}`, `importer-${randomUUID()}`]
      const fields = { permissions: [permission], roles: [role] }
      const { status, body } = await importKeys([byHash(apiId, first, fields), byHash(apiId, second, fields)])
      expect(status, JSON.stringify(body)).toBe(200)
      const made = {
        permission: await grantsOn(stack.backend).permissions.findByName(permission),
        role: await grantsOn(stack.backend).roles.findByName(role),
      }
      for (const hash of [first, second]) {
        expect(await stored(hash)).toMatchObject({ permissionIds: [made.permission?.id], roleIds: [made.role?.id] })
      }
    })

    it('imports 100 keys in one call, answering their ids in the order of the request', async () => {
      const apiId = await newApi()
      const keys = Array.from({ length: 100 }, (_, i) =>
        byHash(apiId, someHash(), { start: String(i), enabled: i % 3 > 0 }),
      )
      const { status, body } = await importKeys(keys)
      expect(status, JSON.stringify(body)).toBe(200)
      expect(body.keyIds).toHaveLength(100)
      for (const [i, key] of keys.entries()) {
        expect(await stored(key.hash.value)).toMatchObject({ id: body.keyIds[i], start: String(i), enabled: i % 3 > 0 })
      }
    })

    it('a key imported by plaintext, or by its hash, verifies with its plaintext through the verifier', async () => {
      const apiId = await newApi()
      const [first, second] = [generateKey('test').key, generateKey('test').key]
      const { status, body } = await importKeys([
        { apiId, plaintext: first },
        byHash(apiId, hashKey(second), { start: second.slice(0, 9) }),
      ])
      expect(status, JSON.stringify(body)).toBe(200)
      expect(await stack.verify({ key: first, apiId })).toMatchObject({ valid: true, keyId: body.keyIds[0] })
      expect(await stack.verify({ key: second, apiId })).toMatchObject({ valid: true, keyId: body.keyIds[1] })
    })

    it('derives start from the plaintext: the prefix and 4 characters, never much of a short key', async () => {
      const apiId = await newApi()
      const { body } = await importKeys([
        { apiId, plaintext: 'sk_live_abcdefgh12345678', prefix: 'sk_live' },
        { apiId, plaintext: 'abcdefgh12345678' },
        { apiId, plaintext: 'abcd' },
      ])
      const starts = await Promise.all(body.keyIds.map(async (keyId: string) => (await stack.getKey(keyId)).start))
      expect(starts).toEqual(['sk_live_abcd', 'abcd', 'ab'])
    })

    // rerollKey gives the new key the old one's prefix, read from its start, which an import may set to anything.
    it('rerolls an imported key into a checksummed one, protected whatever prefix its start gives', async () => {
      const apiId = await newApi()
      for (const start of ['sk-live_abcd', 'averyveryverylongprefix_abcd', 'clé_abcd']) {
        const { body } = await importKeys([byHash(apiId, someHash(), { start })])
        const rerolled = await stack.post('keys.rerollKey', { keyId: body.keyIds[0] })
        expect(rerolled.status, JSON.stringify(rerolled.body)).toBe(200)
        const key: string = rerolled.body.key
        expect(key.startsWith(start.slice(0, start.indexOf('_') + 1))).toBe(true)
        expect(await stack.verify({ key })).toMatchObject({ valid: true, keyId: rerolled.body.keyId })
        const refused = await metric(stack.verifier, 'keygate_verify_checksum_refusals_total')
        const at = key.length - 10
        const typo = key.slice(0, at) + (key[at] === 'a' ? 'b' : 'a') + key.slice(at + 1)
        expect(await stack.verify({ key: typo })).toMatchObject({ valid: false, code: 'NOT_FOUND' })
        expect(await metric(stack.verifier, 'keygate_verify_checksum_refusals_total')).toBe(refused + 1)
      }
    })

    it('imports by plaintext keys of the checksummed shape whose checksum matches, and keys of any other shape', async () => {
      const apiId = await newApi()
      const keys = [generateKey('sk_live').key, `sk_live_${'A'.repeat(22)}`, `${'A'.repeat(22)}_abc`]
      const { status, body } = await importKeys(keys.map((plaintext) => ({ apiId, plaintext })))
      expect(status, JSON.stringify(body)).toBe(200)
      for (const [i, key] of keys.entries())
        expect(await stack.verify({ key })).toMatchObject({ valid: true, keyId: body.keyIds[i] })
    })

    it('takes a hash and the plaintext it was made from together', async () => {
      const apiId = await newApi()
      const key = generateKey(undefined).key
      expect((await importKeys([byHash(apiId, hashKey(key), { plaintext: key })])).status).toBe(200)
      expect((await stack.verify({ key })).valid).toBe(true)
    })
  })

  describe('errors', () => {
    it('a hash twice in one request: 409 naming both, and no key of the request is written', async () => {
      const apiId = await newApi()
      const keys = Array.from({ length: 10 }, () => byHash(apiId))
      keys.push(keys[0]!)
      const { status, body } = await importKeys(keys)
      expect(status).toBe(409)
      expect(body.error).toMatchObject({
        code: 'CONFLICT',
        message: expect.stringContaining('10: is the same key as 0'),
      })
      for (const key of keys) expect(await stored(key.hash.value)).toBeNull()
    })

    it('a plaintext and a hash of the same key in one request are the same key too', async () => {
      const apiId = await newApi()
      const key = generateKey(undefined).key
      const { status } = await importKeys([{ apiId, plaintext: key }, byHash(apiId, hashKey(key))])
      expect(status).toBe(409)
      expect(await stored(hashKey(key))).toBeNull()
    })

    it('a hash stored already (in any api): 409 naming every such entry, nothing written', async () => {
      const [apiId, otherApiId] = [await newApi(), await newApi()]
      const existing = await stack.post('keys.createKey', { apiId: otherApiId })
      const fresh = byHash(apiId)
      const { status, body } = await importKeys([fresh, { apiId, plaintext: existing.body.key }])
      expect(status).toBe(409)
      expect(body.error.message).toContain('1: a key with this hash exists already')
      expect(body.error.message).not.toContain(existing.body.keyId)
      expect(await stored(fresh.hash.value)).toBeNull()
      expect((await stack.verify({ key: existing.body.key })).keyId).toBe(existing.body.keyId)
    })

    it('a write that fails part-way (the same hash stored meanwhile) deletes the keys the call wrote: 409', async () => {
      const apiId = await newApi()
      const keys = Array.from({ length: 5 }, () => byHash(apiId))
      const store = stack.backend.store
      const createKey = store.keys.createKey.bind(store.keys)
      let calls = 0
      // Another writer stores the third key's hash between the duplicate check and the write.
      store.keys.createKey = async (record) => {
        if (++calls === 3) await createKey({ ...record, id: newId('key'), apiId })
        return createKey(record)
      }
      try {
        const { status, body } = await importKeys(keys)
        expect(status, JSON.stringify(body)).toBe(409)
      } finally {
        store.keys.createKey = createKey
      }
      const left = await Promise.all(keys.map((key) => stored(key.hash.value)))
      expect(left.map((record) => record !== null)).toEqual([false, false, true, false, false])
      const listed = await stack.controlPlane.app.inject({
        url: `/v1/apis.listKeys?apiId=${apiId}`,
        headers: ADMIN_HEADERS,
      })
      expect(listed.json().keys).toHaveLength(1)
    })

    it('an api that does not exist: 404 naming it, nothing written', async () => {
      const apiId = newId('api')
      const key = byHash(apiId)
      const { status, body } = await importKeys([key])
      expect(status).toBe(404)
      expect(body.error).toMatchObject({ code: 'NOT_FOUND', message: `api ${apiId} not found` })
    })

    it.each([
      ['a rate limit of an unknown type', { ratelimit: { type: 'x', limit: 1, duration: 1000 } }, 'ratelimit.type'],
      [
        'a daily refill with a refillDay',
        { remaining: 10, refill: { interval: 'daily', amount: 100, refillDay: 4 } },
        'refillDay',
      ],
      ['a refill without credits', { refill: { interval: 'daily', amount: 100 } }, 'refill: needs remaining'],
      ['a hash that is not SHA-256 in base64', { hash: { value: 'x', variant: 'sha256_base64' } }, 'hash.value'],
      ['a hash of another variant', { hash: { value: someHash(), variant: 'sha256_hex' } }, 'hash.variant'],
      ['neither plaintext nor hash', { hash: undefined }, '0: give either plaintext or hash'],
      [
        'a hash that is not that of the plaintext',
        { plaintext: 'sk_something' },
        '0.hash: is not the hash of plaintext',
      ],
      // Verifiers refuse it before any lookup: imported, it could never verify.
      [
        'a plaintext of the checksummed shape whose checksum does not match',
        { hash: undefined, plaintext: `sk_live_${'A'.repeat(22)}_${'B'.repeat(6)}` },
        '0.plaintext: has the shape of a checksummed key',
      ],
      ['an expiry in the past', { expires: 1_000 }, 'expires'],
      ['an unknown field', { recoverable: true }, 'recoverable'],
    ])('%s: 400 naming the field, nothing written', async (_what, fields, named) => {
      const apiId = await newApi()
      const valid = byHash(apiId)
      const bad = { ...byHash(apiId), ...fields }
      const { status, body } = await importKeys([bad, valid])
      expect({ status, code: body.error?.code }).toEqual({ status: 400, code: 'BAD_REQUEST' })
      expect(body.error.message).toContain(named)
      expect(await stored(valid.hash.value)).toBeNull()
    })

    it("checks in order: create_key, the identities' rights, each key's plaintext or hash, its fields, the apis", async () => {
      const apiId = await newApi()
      const badHash = byHash(apiId, 'x')
      // A root key that may not import learns nothing of the keys it sent.
      expect((await importKeys([badHash], await rootKey([randomUUID()]))).status).toBe(403)
      const past = { expires: 1_000 }
      const binder = await rootKey([`api.${apiId}.create_key`])
      expect(
        (await importKeys([byHash(apiId, someHash(), { externalId: randomUUID(), ...past })], binder)).status,
      ).toBe(403)
      // Every key's plaintext or hash before any key's fields.
      const { body } = await importKeys([byHash(apiId, someHash(), past), { apiId }])
      expect(body.error.message).toContain('1: give either plaintext or hash')
      // The fields before the apis.
      expect((await importKeys([byHash(newId('api'), someHash(), past)])).status).toBe(400)
    })

    it("checks v1's own spellings in the same order: an ownerId before the rights, a rate limit among the fields", async () => {
      const apiId = await newApi()
      const half = { ratelimit: { limit: 10 } }
      // A root key that may not import learns nothing of the keys it sent, spelt as they are.
      for (const fields of [half, { ownerId: 'a', externalId: 'b' }]) {
        expect((await importKeys([byHash(apiId, someHash(), fields)], await rootKey([randomUUID()]))).status).toBe(403)
      }
      // The identities' rights before a rate limit given by half, in that key or in another.
      const binder = await rootKey([`api.${apiId}.create_key`])
      const bound = { externalId: randomUUID() }
      for (const keys of [
        [byHash(apiId, someHash(), { ...bound, ...half })],
        [byHash(apiId, someHash(), half), byHash(apiId, someHash(), bound)],
      ]) {
        const { status, body } = await importKeys(keys, binder)
        expect({ status, code: body.error.code }).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS' })
      }
      // Every key's plaintext or hash before it.
      const { body } = await importKeys([byHash(apiId, someHash(), half), { apiId }])
      expect(body.error.message).toBe('1: give either plaintext or hash')
      // A key's fields before the next key's.
      const past = byHash(apiId, someHash(), { expires: 1_000 })
      expect((await importKeys([past, byHash(apiId, someHash(), half)])).body.error.message).toBe(
        'expires: must be unix milliseconds (this looks like seconds)',
      )
      expect((await importKeys([byHash(apiId, someHash(), half), past])).body.error.message).toBe(
        'ratelimit: needs limit and duration (ms, at least 1000)',
      )
      // An ownerId that disagrees before the rights, which need the externalId it names.
      const differs = byHash(apiId, someHash(), { ownerId: 'a', externalId: 'b' })
      expect((await importKeys([byHash(apiId, someHash(), bound), differs], binder)).body.error.message).toBe(
        'externalId: differs from its alias ownerId',
      )
    })

    it('no keys, more than 100, or not a list: 400', async () => {
      const apiId = await newApi()
      for (const payload of [[], Array.from({ length: 101 }, () => byHash(apiId)), byHash(apiId)]) {
        expect((await importKeys(payload)).status).toBe(400)
      }
    })
  })

  describe('security', () => {
    it.each([
      ['no Authorization', undefined],
      ['a wrong root key', `Bearer ${generateRootKey().key}`],
    ])('%s: refused as UNAUTHORIZED, nothing written', async (_who, authorization) => {
      const key = byHash(await newApi())
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (authorization) headers.authorization = authorization
      const { status, body } = await importKeys([key], headers)
      expect(body.error.code).toBe('UNAUTHORIZED')
      expect(status).toBe(403)
      expect(await stored(key.hash.value)).toBeNull()
    })

    it.each([
      ['no permissions', () => []],
      ['unrelated permissions', () => [randomUUID(), randomUUID()]],
      [
        'every action on another api',
        () =>
          ['read_api', 'delete_api', 'read_key', 'update_key', 'delete_key', 'create_key'].map(
            (a) => `api.${newId('api')}.${a}`,
          ),
      ],
    ])('%s: 403 INSUFFICIENT_PERMISSIONS, nothing written', async (_who, permissions) => {
      const key = byHash(await newApi())
      const { status, body } = await importKeys([key], await rootKey(permissions()))
      expect({ status, code: body.error.code }).toEqual({ status: 403, code: 'INSUFFICIENT_PERMISSIONS' })
      expect(await stored(key.hash.value)).toBeNull()
    })

    it.each([
      ['*', () => ['*']],
      ['* and more', () => ['*', randomUUID()]],
      ['api.*.create_key', () => ['api.*.create_key']],
      ['api.*.create_key and more', () => ['api.*.create_key', randomUUID()]],
      ['create_key on the api', (apiId: string) => [`api.${apiId}.create_key`]],
      ['create_key on the api and more', (apiId: string) => [`api.${apiId}.create_key`, randomUUID()]],
    ])('a root key with %s: 200, by hash and by plaintext (no encrypt_key needed)', async (_who, permissions) => {
      const apiId = await newApi()
      const auth = await rootKey(permissions(apiId))
      const { status, body } = await importKeys([byHash(apiId), { apiId, plaintext: randomUUID() }], auth)
      expect(status, JSON.stringify(body)).toBe(200)
    })

    it('needs create_key on every api of the request: one missing is a 403 and nothing is written', async () => {
      const [allowed, other] = [await newApi(), await newApi()]
      const keys = [byHash(allowed), byHash(other)]
      const { status } = await importKeys(keys, await rootKey([`api.${allowed}.create_key`]))
      expect(status).toBe(403)
      for (const key of keys) expect(await stored(key.hash.value)).toBeNull()
    })
  })
})
