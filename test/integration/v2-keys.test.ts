import { createHash, randomUUID } from 'node:crypto'
import type { Unkey } from '@unkey/api'
import { beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ManualClock, TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'

const NOW = Date.UTC(2031, 4, 10, 12)

/**
 * Unkey v2's keys.createKey, getKey, updateKey, deleteKey, whoami, rerollKey and updateCredits, driven by Unkey's
 * SDK (whose schemas check every answer), over the same keys as v1: each key made or changed here is verified
 * through v1's verifyKey on the verifier, and v1's keys are read and changed here.
 */
onBothStores('v2 keys.*', { clock: () => new ManualClock(NOW) }, (stack) => {
  const clock = stack.clock!
  let sdk: Unkey
  let apiId: string
  let otherApiId: string
  beforeAll(async () => {
    sdk = unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
    apiId = (await sdk.apis.createApi({ name: 'v2 keys' })).data.apiId
    otherApiId = (await sdk.apis.createApi({ name: 'elsewhere' })).data.apiId
    expect((await stack.post('permissions.createRole', { name: 'editor' })).status).toBe(200)
  })

  /** A root key holding only `permissions`, as headers and as an SDK. */
  const rootKeyWith = async (...permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: clock.now() })
    return { sdk: unkeySdk(stack.controlPlane, key), headers: { ...ADMIN_HEADERS, authorization: `Bearer ${key}` } }
  }
  const post = async (operation: string, payload: object, headers = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const verify = (key: string, extra: object = {}) => stack.verify({ key, ...extra })

  it('createKey with credits, named limits, permissions, a role and an externalId; v1 verifies it', async () => {
    const { data } = await sdk.keys.createKey({
      apiId,
      prefix: 'sk',
      name: 'acme checkout',
      externalId: 'acme',
      meta: { plan: 'pro' },
      credits: { remaining: 10, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      ratelimits: [{ name: 'requests', limit: 5, duration: 60_000, autoApply: true }],
      permissions: ['documents.read', 'documents.write'],
      roles: ['editor'],
      expires: NOW + 86_400_000,
    })
    expect(data.key).toMatch(/^sk_/)
    expect(await verify(data.key, { authorization: { permissions: 'documents.write' } })).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId: data.keyId,
      name: 'acme checkout',
      ownerId: 'acme',
      meta: { plan: 'pro' },
      remaining: 9,
      permissions: ['documents.read', 'documents.write'],
      roles: ['editor'],
    })
    const read = await sdk.keys.getKey({ keyId: data.keyId })
    const identityId = read.data.identity?.id
    expect(identityId).toMatch(/^id_/)
    expect(read.data).toEqual({
      keyId: data.keyId,
      start: data.key.slice(0, 7),
      enabled: true,
      name: 'acme checkout',
      meta: { plan: 'pro' },
      createdAt: NOW,
      expires: NOW + 86_400_000,
      permissions: ['documents.read', 'documents.write'],
      roles: ['editor'],
      credits: { remaining: 9, refill: { interval: 'monthly', amount: 100, refillDay: 15 } },
      identity: { id: identityId, externalId: 'acme' },
      ratelimits: [
        { id: expect.stringMatching(/^rl_/), name: 'requests', limit: 5, duration: 60_000, autoApply: true },
      ],
    })
    // The same key through v1's getKey.
    expect(await stack.getKey(data.keyId)).toMatchObject({
      id: data.keyId,
      apiId,
      ownerId: 'acme',
      remaining: 9,
      refill: { interval: 'monthly', amount: 100, refillDay: 15 },
      ratelimits: [{ name: 'requests', limit: 5, duration: 60_000, autoApply: true }],
    })
  })

  it('names roles by any name a role can have, spaces included, on createKey, updateKey and migrateKeys', async () => {
    const roles = [`Billing Admin ${randomUUID()}`, `Read Only Access ${randomUUID()}`]
    for (const name of roles) expect((await post('permissions.createRole', { name })).status).toBe(200)
    const created = await post('keys.createKey', { apiId, roles: [roles[0]] })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    const updated = await post('keys.updateKey', { keyId: created.body.data.keyId, roles })
    expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    const hash = createHash('sha256').update(randomUUID()).digest('base64')
    const migrated = await post('keys.migrateKeys', { migrationId: 'migration', apiId, keys: [{ hash, roles }] })
    expect(migrated.status, JSON.stringify(migrated.body)).toBe(200)
    expect((await verify(created.body.data.key)).roles?.sort()).toEqual([...roles].sort())
  })

  it('createKey refuses v2 credit rules, unknown fields and missing roles; makes missing permissions', async () => {
    const monthly = await post('keys.createKey', {
      apiId,
      credits: { remaining: 5, refill: { interval: 'monthly', amount: 5 } },
    })
    expect(monthly).toMatchObject({
      status: 400,
      body: { error: { errors: [{ location: 'body.credits.refill.refillDay' }] } },
    })
    const noBalance = await post('keys.createKey', {
      apiId,
      credits: { remaining: null, refill: { interval: 'daily', amount: 5 } },
    })
    expect(noBalance).toMatchObject({
      status: 400,
      body: { error: { detail: expect.stringContaining('credits.remaining') } },
    })
    const unknown = await post('keys.createKey', { apiId, remaining: 5 })
    expect(unknown.status).toBe(400)
    expect(JSON.stringify(unknown.body.error.errors)).toContain('remaining')
    expect((await post('keys.createKey', { apiId, recoverable: true })).status).toBe(412)
    await expect(sdk.keys.createKey({ apiId: 'api_missing' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    })
    // A role must exist (Unkey's 404); the permissions of that refused call are not made.
    const missingRole = await post('keys.createKey', { apiId, roles: ['nobody'], permissions: ['made.never'] })
    expect(missingRole).toMatchObject({
      status: 404,
      body: { error: { type: 'https://unkey.com/docs/errors/unkey/data/role_not_found' } },
    })
    const listed = await stack.controlPlane.app.inject({
      method: 'GET',
      url: '/v1/permissions.listPermissions',
      headers: ADMIN_HEADERS,
    })
    expect(listed.body).not.toContain('made.never')
    // As Unkey's v2: create_key alone makes the permissions a key names (no rbac permission asked).
    const creator = await rootKeyWith(`api.${apiId}.create_key`)
    const { data } = await creator.sdk.keys.createKey({ apiId, permissions: ['fresh.permission'] })
    expect((await verify(data.key)).permissions).toEqual(['fresh.permission'])
    // Another api, which this root key may not create keys in: the 404 of an api that does not exist (Unkey's).
    await expect(creator.sdk.keys.createKey({ apiId: otherApiId })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { status: 404, type: 'https://unkey.com/docs/errors/unkey/data/api_not_found' } },
    })
  })

  it('meta too large and a limit named twice are 400 invalid_input (as identities.* answer them), after the refusal', async () => {
    const { data } = await sdk.keys.createKey({ apiId })
    const limit = { name: 'requests', limit: 1, duration: 60_000 }
    const stranger = await rootKeyWith(`api.${otherApiId}.create_key`, `api.${otherApiId}.update_key`)
    for (const fields of [{ meta: { blob: 'x'.repeat(70_000) } }, { ratelimits: [limit, limit] }]) {
      for (const [operation, payload] of [
        ['keys.createKey', { apiId, ...fields }],
        ['keys.updateKey', { keyId: data.keyId, ...fields }],
      ] as const) {
        const refused = await post(operation, payload)
        expect(refused.status, `${operation} ${Object.keys(fields)[0]}`).toBe(400)
        expect(refused.body.error.type).toBe('https://unkey.com/docs/errors/unkey/application/invalid_input')
        // A root key that may not make the call learns that first: createKey hides the api (404), updateKey is a 403.
        expect((await post(operation, payload, stranger.headers)).status).toBe(
          operation === 'keys.createKey' ? 404 : 403,
        )
      }
    }
    const badCredits = { credits: { remaining: null, refill: { interval: 'daily', amount: 5 } } }
    expect((await post('keys.createKey', { apiId, ...badCredits }, stranger.headers)).status).toBe(404)
    expect((await post('keys.updateKey', { keyId: data.keyId, ...badCredits }, stranger.headers)).status).toBe(403)
  })

  it("meta too large and a limit named twice come before the rules v1 shares (412, expiry, the identity's right)", async () => {
    const limit = { name: 'requests', limit: 1, duration: 60_000 }
    const tooLarge = { meta: { blob: 'x'.repeat(70_000) } }
    const twice = { ratelimits: [limit, limit] }
    for (const fields of [tooLarge, twice]) {
      for (const other of [{ recoverable: true }, { expires: 1_000 }]) {
        const refused = await post('keys.createKey', { apiId, ...fields, ...other })
        expect(refused.status, JSON.stringify(refused.body)).toBe(400)
        expect(refused.body.error.detail).toBe(
          fields === twice
            ? 'Ratelimit with name "requests" is already defined in the request'
            : 'meta: is larger than 65536 bytes',
        )
      }
    }
    const { data } = await sdk.keys.createKey({ apiId })
    // A root key that may update the key but not make an identity: the input's 400 comes first.
    const updater = await rootKeyWith(`api.${apiId}.update_key`)
    for (const fields of [tooLarge, twice]) {
      const payload = { keyId: data.keyId, externalId: `new-${randomUUID()}`, ...fields }
      expect((await post('keys.updateKey', payload, updater.headers)).status).toBe(400)
    }
  })

  it("a root key without create_key learns that (404) before v2's own rules: a monthly refill's day, the allow-list", async () => {
    const stranger = await rootKeyWith(`api.${otherApiId}.create_key`)
    for (const fields of [
      { credits: { remaining: 5, refill: { interval: 'monthly', amount: 5 } } },
      { credits: { remaining: null, refill: { interval: 'monthly', amount: 5 } } },
      { ipAllowlist: ['nope'] },
    ]) {
      const refused = await post('keys.createKey', { apiId, ...fields }, stranger.headers)
      expect({ fields, status: refused.status, type: refused.body.error.type }).toEqual({
        fields,
        status: 404,
        type: 'https://unkey.com/docs/errors/unkey/data/api_not_found',
      })
    }
  })

  it("createKey reports a key's first broken rule in v2's words: credits, then meta and limits, then 412 and expiry", async () => {
    let deep: Record<string, unknown> = {}
    for (let i = 0; i < 20; i++) deep = { d: deep }
    const limit = { name: 'requests', limit: 1, duration: 60_000 }
    // Each rule broken alone, and its answer: of two broken in one body, the earlier answers.
    const rules: [object, number, string, string][] = [
      [
        { credits: { remaining: 5, refill: { interval: 'monthly', amount: 5 } } },
        400,
        'credits.refill.refillDay',
        'must be given when the refill interval is monthly',
      ],
      [
        { ipAllowlist: ['nope'] },
        400,
        'ipAllowlist.0',
        '"nope" is not an IP address or CIDR range (such as 203.0.113.7, 10.0.0.0/8 or 2001:db8::/32)',
      ],
      [
        { credits: { remaining: null, refill: { interval: 'daily', amount: 5 } } },
        400,
        'credits.remaining',
        'must be given (not null) when credits.refill is set',
      ],
      [
        { credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } } },
        400,
        'credits.refill.refillDay',
        'must not be given when the refill interval is daily',
      ],
      [
        { credits: { remaining: null, lowThreshold: 2 } },
        400,
        'credits.lowThreshold',
        'only for a key with credits (remaining): a key without them has no balance to watch',
      ],
      [{ meta: deep }, 400, 'meta', 'nests deeper than 16 levels'],
      [{ ratelimits: [limit, limit] }, 400, '', 'Ratelimit with name "requests" is already defined in the request'],
      [{ recoverable: true }, 412, 'recoverable', 'Keygate stores only hashes; a key cannot be shown again'],
      [{ expires: 1_000 }, 400, 'expires', 'must be unix milliseconds (this looks like seconds)'],
    ]
    const detail = (field: string, problem: string) => (field ? `${field}: ${problem}` : problem)
    for (const [i, [fields, status, field, problem]] of rules.entries()) {
      const alone = await post('keys.createKey', { apiId, ...fields })
      expect({ fields, status: alone.status, detail: alone.body.error.detail }).toEqual({
        fields,
        status,
        detail: detail(field, problem),
      })
      if (status === 400) {
        expect(alone.body.error.errors).toEqual([{ location: field ? `body.${field}` : 'body', message: problem }])
      }
      for (const [later] of rules.slice(i + 1)) {
        // The rules on credits cannot all be broken by one body.
        if (Object.keys(later).some((name) => name in fields)) continue
        const both = await post('keys.createKey', { apiId, ...fields, ...later })
        expect({ fields, later, detail: both.body.error.detail }).toEqual({
          fields,
          later,
          detail: detail(field, problem),
        })
      }
    }
    // A monthly refill without its day, on a key without credits: the day is asked for first.
    const both = await post('keys.createKey', {
      apiId,
      credits: { remaining: null, refill: { interval: 'monthly', amount: 5 } },
    })
    expect(both.body.error.detail).toBe('credits.refill.refillDay: must be given when the refill interval is monthly')
  })

  it('createKey: empty permissions and roles name nothing (the record holds none, as a key given no list)', async () => {
    const { data } = await sdk.keys.createKey({ apiId, permissions: [], roles: [] })
    const record = await stack.backend.store.keys.getKeyById(data.keyId)
    expect(record?.permissionIds).toBeUndefined()
    expect(record?.roleIds).toBeUndefined()
  })

  it('getKey: 404 for an unknown key, 403 without read_key on its api, 412 for decrypt', async () => {
    const { data } = await sdk.keys.createKey({ apiId })
    await expect(sdk.keys.getKey({ keyId: 'key_missing' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' } },
    })
    const elsewhere = await rootKeyWith(`api.${otherApiId}.read_key`)
    await expect(elsewhere.sdk.keys.getKey({ keyId: data.keyId })).rejects.toMatchObject({
      name: 'ForbiddenErrorResponse',
    })
    const reader = await rootKeyWith(`api.${apiId}.read_key`)
    expect((await reader.sdk.keys.getKey({ keyId: data.keyId })).data).toEqual({
      keyId: data.keyId,
      start: data.key.slice(0, 4),
      enabled: true,
      createdAt: NOW,
    })
    expect((await post('keys.getKey', { keyId: data.keyId, decrypt: true })).status).toBe(412)
    // decrypt is refused once the key is found and readable: 404 and 403 come first.
    expect((await post('keys.getKey', { keyId: 'key_missing', decrypt: true })).status).toBe(404)
    expect((await post('keys.getKey', { keyId: data.keyId, decrypt: true }, elsewhere.headers)).status).toBe(403)
    expect((await post('keys.getKey', { keyId: data.keyId, extra: 1 })).status).toBe(400)
  })

  it("a v1 key reads in v2's shape (its ratelimit as the auto-applied `default`) and changes in v2", async () => {
    const { body: v1 } = await stack.post('keys.createKey', {
      apiId,
      externalId: 'v1-owner',
      remaining: 3,
      refill: { interval: 'daily', amount: 3 },
      ratelimit: { limit: 10, duration: 1000 },
      ratelimits: [{ name: 'tokens', limit: 100, duration: 60_000 }],
    })
    const { data } = await sdk.keys.getKey({ keyId: v1.keyId })
    expect(data.credits).toEqual({ remaining: 3, refill: { interval: 'daily', amount: 3 } })
    expect(data.identity?.externalId).toBe('v1-owner')
    expect(data.ratelimits).toEqual([
      { id: expect.stringMatching(/^rl_/), name: 'default', limit: 10, duration: 1000, autoApply: true },
      { id: expect.stringMatching(/^rl_/), name: 'tokens', limit: 100, duration: 60_000, autoApply: false },
    ])
    // The ids are stable: the same limit reads with the same id.
    expect((await sdk.keys.getKey({ keyId: v1.keyId })).data.ratelimits).toEqual(data.ratelimits)
    // Changed through v2, verified through v1.
    expect((await sdk.keys.updateCredits({ keyId: v1.keyId, operation: 'increment', value: 2 })).data).toEqual({
      remaining: 5,
      refill: { interval: 'daily', amount: 3 },
    })
    await sdk.keys.updateKey({ keyId: v1.keyId, meta: { via: 'v2' } })
    expect(await verify(v1.key)).toMatchObject({ valid: true, remaining: 4, ownerId: 'v1-owner', meta: { via: 'v2' } })
  })

  it('updateKey changes what it is given; v1 verifies the change', async () => {
    const { data } = await sdk.keys.createKey({
      apiId,
      name: 'before',
      meta: { a: 1 },
      externalId: 'upd',
      credits: { remaining: 5 },
      permissions: ['p.one'],
      roles: ['editor'],
    })
    await sdk.keys.updateKey({
      keyId: data.keyId,
      name: 'after',
      meta: null,
      externalId: null,
      credits: { remaining: 50, refill: { interval: 'daily', amount: 50 } },
      ratelimits: [{ name: 'calls', limit: 2, duration: 60_000, autoApply: true }],
      permissions: ['p.two'],
      roles: [],
    })
    const { data: read } = await sdk.keys.getKey({ keyId: data.keyId })
    expect(read).toMatchObject({
      name: 'after',
      updatedAt: NOW,
      credits: { remaining: 50, refill: { interval: 'daily', amount: 50 } },
      permissions: ['p.two'],
      ratelimits: [{ name: 'calls', limit: 2, duration: 60_000, autoApply: true }],
    })
    expect(read.meta).toBeUndefined()
    expect(read.identity).toBeUndefined()
    expect(read.roles).toBeUndefined()
    expect(await verify(data.key)).toMatchObject({ valid: true, remaining: 49, permissions: ['p.two'] })
    expect(await verify(data.key)).toMatchObject({ valid: true })
    expect(await verify(data.key)).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    // credits: null takes the credits (and their refill) away; enabled: false stops the key.
    await sdk.keys.updateKey({ keyId: data.keyId, credits: null, ratelimits: [], enabled: false })
    const { data: after } = await sdk.keys.getKey({ keyId: data.keyId })
    expect(after.credits).toBeUndefined()
    expect(after.ratelimits).toBeUndefined()
    await waitFor(async () => (await verify(data.key)).code === 'DISABLED', 'the disable to reach the verifier')
  })

  it('updateKey: 400 for v2 credit rules and unknown fields, 403, 404, and 404 for a missing role', async () => {
    const { data } = await sdk.keys.createKey({ apiId })
    const refillOnly = await post('keys.updateKey', {
      keyId: data.keyId,
      credits: { refill: { interval: 'daily', amount: 5 } },
    })
    expect(refillOnly).toMatchObject({
      status: 400,
      body: { error: { errors: [{ location: 'body.credits.remaining' }] } },
    })
    const daily = await post('keys.updateKey', {
      keyId: data.keyId,
      credits: { remaining: 5, refill: { interval: 'daily', amount: 5, refillDay: 3 } },
    })
    expect(daily).toMatchObject({
      status: 400,
      body: { error: { errors: [{ location: 'body.credits.refill.refillDay' }] } },
    })
    expect((await post('keys.updateKey', { keyId: data.keyId, ratelimit: { limit: 1 } })).status).toBe(400)
    // A key with credits has a balance to refill: its refill alone may change.
    const { data: funded } = await sdk.keys.createKey({ apiId, credits: { remaining: 7 } })
    const refill = { interval: 'daily', amount: 5 } as const
    expect((await post('keys.updateKey', { keyId: funded.keyId, credits: { refill } })).status).toBe(200)
    expect((await sdk.keys.getKey({ keyId: funded.keyId })).data.credits).toMatchObject({ remaining: 7, refill })
    const reader = await rootKeyWith('api.*.read_key')
    await expect(reader.sdk.keys.updateKey({ keyId: data.keyId, name: 'no' })).rejects.toMatchObject({
      name: 'ForbiddenErrorResponse',
    })
    await expect(sdk.keys.updateKey({ keyId: 'key_missing', name: 'no' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
    })
    await expect(sdk.keys.updateKey({ keyId: data.keyId, roles: ['nobody'] })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/role_not_found' } },
    })
    // update_key alone, as Unkey's v2 asks, changes permissions and roles too.
    const updater = await rootKeyWith(`api.${apiId}.update_key`)
    await updater.sdk.keys.updateKey({ keyId: data.keyId, permissions: ['by.updater'], roles: ['editor'] })
    expect(await verify(data.key)).toMatchObject({ permissions: ['by.updater'], roles: ['editor'] })
  })

  it('updateKey words the rules on credits as createKey does, for a key with credits and one without', async () => {
    const { data: unlimited } = await sdk.keys.createKey({ apiId })
    const { data: funded } = await sdk.keys.createKey({ apiId, credits: { remaining: 7 } })
    const cases: [string, object, string, string][] = [
      [
        unlimited.keyId,
        { refill: { interval: 'daily', amount: 5 } },
        'credits.remaining',
        'must be given (not null) when credits.refill is set',
      ],
      [
        funded.keyId,
        { remaining: null, refill: { interval: 'daily', amount: 5 } },
        'credits.remaining',
        'must be given (not null) when credits.refill is set',
      ],
      [
        funded.keyId,
        { refill: { interval: 'monthly', amount: 5 } },
        'credits.refill.refillDay',
        'must be given when the refill interval is monthly',
      ],
      [
        funded.keyId,
        { refill: { interval: 'daily', amount: 5, refillDay: 3 } },
        'credits.refill.refillDay',
        'must not be given when the refill interval is daily',
      ],
      [
        unlimited.keyId,
        { lowThreshold: 2 },
        'credits.lowThreshold',
        'only for a key with credits (remaining): a key without them has no balance to watch',
      ],
    ]
    for (const [keyId, credits, field, problem] of cases) {
      const refused = await post('keys.updateKey', { keyId, credits })
      expect({ credits, status: refused.status, detail: refused.body.error.detail }).toEqual({
        credits,
        status: 400,
        detail: `${field}: ${problem}`,
      })
      expect(refused.body.error.errors).toEqual([{ location: `body.${field}`, message: problem }])
    }
    expect((await sdk.keys.getKey({ keyId: funded.keyId })).data.credits).toEqual({ remaining: 7 })
  })

  it('deleteKey: the key stops verifying; then 404; 403 without delete_key', async () => {
    const { data } = await sdk.keys.createKey({ apiId })
    const reader = await rootKeyWith('api.*.read_key')
    await expect(reader.sdk.keys.deleteKey({ keyId: data.keyId })).rejects.toMatchObject({
      name: 'ForbiddenErrorResponse',
    })
    expect((await post('keys.deleteKey', { keyId: data.keyId, permanent: 'yes' })).status).toBe(400)
    const deleted = await sdk.keys.deleteKey({ keyId: data.keyId, permanent: true })
    expect(deleted.data).toEqual({})
    await waitFor(async () => (await verify(data.key)).code === 'NOT_FOUND', 'the delete to reach the verifier')
    await expect(sdk.keys.deleteKey({ keyId: data.keyId })).rejects.toMatchObject({ name: 'NotFoundErrorResponse' })
  })

  it('whoami reads a key by itself; to a root key that may not read it, the key does not exist', async () => {
    const { data } = await sdk.keys.createKey({ apiId, name: 'who', externalId: 'whoami-owner' })
    const { data: who } = await sdk.keys.whoami({ key: data.key })
    expect(who).toEqual((await sdk.keys.getKey({ keyId: data.keyId })).data)
    await expect(sdk.keys.whoami({ key: 'sk_not_a_key_at_all' })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
      data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' } },
    })
    const blind = await rootKeyWith('api.*.create_key')
    await expect(blind.sdk.keys.whoami({ key: data.key })).rejects.toMatchObject({ name: 'NotFoundErrorResponse' })
    expect((await post('keys.whoami', { key: '' })).status).toBe(400)
  })

  it('rerollKey: a new key with the same settings and credits; the old one expires after the grace', async () => {
    const { data: old } = await sdk.keys.createKey({
      apiId,
      prefix: 'rr',
      meta: { keep: true },
      credits: { remaining: 7 },
      permissions: ['reroll.me'],
    })
    const creator = await rootKeyWith(`api.${apiId}.create_key`)
    const { data } = await creator.sdk.keys.rerollKey({ keyId: old.keyId, expiration: 60_000 })
    expect(data.key).toMatch(/^rr_/)
    expect(data.keyId).not.toBe(old.keyId)
    expect(await verify(data.key)).toMatchObject({
      valid: true,
      meta: { keep: true },
      remaining: 6,
      permissions: ['reroll.me'],
    })
    expect((await sdk.keys.getKey({ keyId: old.keyId })).data.expires).toBe(NOW + 60_000)
    clock.advance(60_001)
    await waitFor(async () => (await verify(old.key)).code === 'EXPIRED', 'the old key to expire')
    const updater = await rootKeyWith('api.*.update_key')
    await expect(updater.sdk.keys.rerollKey({ keyId: data.keyId, expiration: 0 })).rejects.toMatchObject({
      name: 'ForbiddenErrorResponse',
    })
    await expect(sdk.keys.rerollKey({ keyId: 'key_missing', expiration: 0 })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
    })
    expect((await post('keys.rerollKey', { keyId: data.keyId })).status).toBe(400)
  })

  describe('credits.lowThreshold (Keygate’s: when spending sends key.credits.low)', () => {
    const creditsOf = async (keyId: string) => (await post('keys.getKey', { keyId })).body.data.credits
    const created = async (credits: object) => {
      const response = await post('keys.createKey', { apiId, credits })
      expect(response.status, JSON.stringify(response.body)).toBe(200)
      return response.body.data as { keyId: string; key: string }
    }

    it('createKey sets it inside credits; getKey, whoami, listKeys and v1 show it; the SDK still reads the key', async () => {
      const refill = { interval: 'daily', amount: 100 }
      const data = await created({ remaining: 100, refill, lowThreshold: 10 })
      expect(await creditsOf(data.keyId)).toEqual({ remaining: 100, refill, lowThreshold: 10 })
      expect((await post('keys.whoami', { key: data.key })).body.data.credits).toEqual({
        remaining: 100,
        refill,
        lowThreshold: 10,
      })
      const listed = (await post('apis.listKeys', { apiId, limit: 100 })).body.data as { keyId: string }[]
      expect(listed.find((key) => key.keyId === data.keyId)).toMatchObject({ credits: { lowThreshold: 10 } })
      expect(await stack.getKey(data.keyId)).toMatchObject({ remaining: 100, creditsLowThreshold: 10 })
      // Unkey's SDK knows no lowThreshold: it reads the key all the same.
      expect((await sdk.keys.getKey({ keyId: data.keyId })).data.credits).toEqual({ remaining: 100, refill })
      expect(await creditsOf((await created({ remaining: 5 })).keyId)).toEqual({ remaining: 5 })
    })

    it('updateKey changes it, clears it (null), leaves it when left out, and sets it with the credits', async () => {
      const { keyId } = await created({ remaining: 100, lowThreshold: 10 })
      const update = (credits: object | null) => post('keys.updateKey', { keyId, credits })
      expect((await update({ lowThreshold: 20 })).status).toBe(200)
      expect(await creditsOf(keyId)).toEqual({ remaining: 100, lowThreshold: 20 })
      expect((await update({ remaining: 60 })).status).toBe(200)
      expect(await creditsOf(keyId)).toEqual({ remaining: 60, lowThreshold: 20 })
      expect((await update({ lowThreshold: null })).status).toBe(200)
      expect(await creditsOf(keyId)).toEqual({ remaining: 60 })
      const { data: unlimited } = await sdk.keys.createKey({ apiId })
      const funded = await post('keys.updateKey', {
        keyId: unlimited.keyId,
        credits: { remaining: 9, lowThreshold: 3 },
      })
      expect(funded.status).toBe(200)
      expect(await creditsOf(unlimited.keyId)).toEqual({ remaining: 9, lowThreshold: 3 })
    })

    it('goes with the credits: credits null, remaining null and updateCredits set null clear it', async () => {
      for (const takeAway of [
        (keyId: string) => post('keys.updateKey', { keyId, credits: null }),
        (keyId: string) => post('keys.updateKey', { keyId, credits: { remaining: null } }),
        (keyId: string) => post('keys.updateCredits', { keyId, operation: 'set', value: null }),
      ]) {
        const { keyId } = await created({ remaining: 100, lowThreshold: 10 })
        expect((await takeAway(keyId)).status).toBe(200)
        expect(await creditsOf(keyId)).toBeUndefined()
        expect((await stack.backend.store.keys.getKeyById(keyId))?.creditsLowThreshold).toBeUndefined()
      }
    })

    it('updateCredits answers it beside the balance', async () => {
      const { keyId } = await created({ remaining: 100, lowThreshold: 10 })
      const answer = await post('keys.updateCredits', { keyId, operation: 'decrement', value: 95 })
      expect(answer.body.data).toEqual({ remaining: 5, lowThreshold: 10 })
    })

    it('is refused (400 at credits.lowThreshold) without credits, and out of 1..1e12', async () => {
      const location = { error: { errors: [{ location: 'body.credits.lowThreshold' }] } }
      // v2's createKey needs credits.remaining in any credits (Unkey's schema); null is no credits.
      expect(await post('keys.createKey', { apiId, credits: { lowThreshold: 5 } })).toMatchObject({
        status: 400,
        body: { error: { errors: [{ location: 'body.credits.remaining' }] } },
      })
      expect(await post('keys.createKey', { apiId, credits: { remaining: null, lowThreshold: 5 } })).toMatchObject({
        status: 400,
        body: location,
      })
      const { data: unlimited } = await sdk.keys.createKey({ apiId })
      expect(await post('keys.updateKey', { keyId: unlimited.keyId, credits: { lowThreshold: 5 } })).toMatchObject({
        status: 400,
        body: location,
      })
      const { keyId } = await created({ remaining: 100, lowThreshold: 10 })
      const dropping = await post('keys.updateKey', { keyId, credits: { remaining: null, lowThreshold: 5 } })
      expect(dropping).toMatchObject({ status: 400, body: location })
      for (const bad of [0, -3, 1.5, '5', 1_000_000_000_001]) {
        const onCreate = await post('keys.createKey', { apiId, credits: { remaining: 10, lowThreshold: bad } })
        expect(onCreate.status, `createKey ${String(bad)}`).toBe(400)
        expect(JSON.stringify(onCreate.body.error.errors)).toContain('lowThreshold')
        expect((await post('keys.updateKey', { keyId, credits: { lowThreshold: bad } })).status).toBe(400)
      }
      expect(await creditsOf(keyId)).toEqual({ remaining: 100, lowThreshold: 10 })
    })

    it('rerollKey keeps it', async () => {
      const { keyId } = await created({ remaining: 12, lowThreshold: 4 })
      const { data } = await sdk.keys.rerollKey({ keyId, expiration: 0 })
      expect(await creditsOf(data.keyId)).toEqual({ remaining: 12, lowThreshold: 4 })
    })
  })

  it('updateCredits sets, increments and decrements (stopping at 0); null takes the credits away', async () => {
    const { data } = await sdk.keys.createKey({
      apiId,
      credits: { remaining: 10, refill: { interval: 'daily', amount: 10 } },
    })
    const change = (operation: 'set' | 'increment' | 'decrement', value?: number | null) =>
      sdk.keys.updateCredits({ keyId: data.keyId, operation, value })
    expect((await change('set', 3)).data).toEqual({ remaining: 3, refill: { interval: 'daily', amount: 10 } })
    expect((await change('increment', 4)).data.remaining).toBe(7)
    expect(await verify(data.key)).toMatchObject({ valid: true, remaining: 6 })
    expect((await change('decrement', 100)).data.remaining).toBe(0)
    expect(await verify(data.key)).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED' })
    expect((await change('set', null)).data).toEqual({ remaining: null })
    expect((await sdk.keys.getKey({ keyId: data.keyId })).data.credits).toBeUndefined()
    const increment = await post('keys.updateCredits', { keyId: data.keyId, operation: 'increment', value: 1 })
    expect(increment).toMatchObject({ status: 400, body: { error: { errors: [{ location: 'body.operation' }] } } })
    expect((await change('set', 2)).data).toEqual({ remaining: 2 })
    expect((await post('keys.updateCredits', { keyId: data.keyId, operation: 'double', value: 1 })).status).toBe(400)
    const reader = await rootKeyWith('api.*.read_key')
    await expect(
      reader.sdk.keys.updateCredits({ keyId: data.keyId, operation: 'set', value: 1 }),
    ).rejects.toMatchObject({ name: 'ForbiddenErrorResponse' })
    await expect(sdk.keys.updateCredits({ keyId: 'key_missing', operation: 'set', value: 1 })).rejects.toMatchObject({
      name: 'NotFoundErrorResponse',
    })
  })
})
