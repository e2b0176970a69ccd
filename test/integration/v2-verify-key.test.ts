import { pino } from 'pino'
import { auditedKey } from '../../control-plane/keys/key-response.js'
import { beforeAll, expect, it } from 'vitest'
import { AuditLog, CLI_ACTOR } from '../../control-plane/audit/audit-log.js'
import { RootKeyEntities } from '../../control-plane/root-keys/root-key-entities.js'
import { RootKeys } from '../../control-plane/root-keys/root-keys.js'
import { systemClock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY, startTestControlPlane, type TestServer } from '../support/apps.js'
import { JSON_ONLY, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'
import { clearOfWindowEdge } from '../support/window-edge.js'

/**
 * v2's keys.verifyKey, served by the verifier sidecar (and the control plane, by the same code): a root key on every
 * call, checked by the verifier from the root-key records the control plane mirrors to it; Unkey's SDK checks every
 * answer. Keys are made through v1: a key made through either wire format verifies through both.
 */
onBothStores('v2 keys.verifyKey', { analytics: true }, (stack) => {
  let apiId: string
  let otherApiId: string
  /** A root key that may only verify keys (of every api). */
  let verifyOnly: string

  /** A stored root key with these permissions, made through the API as an admin would. */
  const rootKey = async (permissions: string[]) => {
    const created = await stack.post('rootKeys.createRootKey', { permissions })
    expect(created.status).toBe(200)
    return created.body as { rootKeyId: string; key: string }
  }
  const key = async (fields: object = {}) => {
    const created = await stack.post('keys.createKey', { apiId, ...fields })
    expect(created.status).toBe(200)
    return created.body as { keyId: string; key: string }
  }
  /** keys.verifyKey on `server` (the verifier unless said), through the SDK. */
  const verify = async (root: string, body: { key: string } & Record<string, unknown>, server = stack.verifier) =>
    (await unkeySdk(server, root).keys.verifyKey(body)).data
  /** The raw answer, for what the SDK turns into a generic error (412), and to see the exact fields. */
  const raw = async (body: object | string, headers: Record<string, string>, server: TestServer = stack.verifier) => {
    const response = await server.app.inject({ method: 'POST', url: '/v2/keys.verifyKey', headers, payload: body })
    return { status: response.statusCode, body: response.json() }
  }
  const bearer = (root: string) => ({ ...JSON_ONLY, authorization: `Bearer ${root}` })
  /** Within the bound: at once on memory, within milliseconds on Redis (pub/sub to the separate verifier). */
  const eventually = (check: () => Promise<boolean>) => waitFor(check, 'the change to reach the verifier', 2_000, 2)

  beforeAll(async () => {
    apiId = (await stack.post('apis.createApi', { name: 'v2 verify' })).body.apiId
    otherApiId = (await stack.post('apis.createApi', { name: 'v2 other' })).body.apiId
    verifyOnly = (await rootKey(['api.*.verify_key'])).key
  })

  it('verifies a key made through v1 on the separate verifier with a verify-only root key', async () => {
    const { keyId, key: plain } = await key({
      name: 'checkout',
      meta: { plan: 'pro' },
      expires: Date.now() + 86_400_000,
    })
    const data = await verify(verifyOnly, { key: plain })
    expect(data).toMatchObject({ valid: true, code: 'VALID', keyId, name: 'checkout', meta: { plan: 'pro' } })
    expect(data.enabled).toBe(true)
    expect(Number.isInteger(data.expires)).toBe(true)
    // The control plane answers the same, by the same code.
    expect(await verify(verifyOnly, { key: plain }, stack.controlPlane)).toMatchObject({ valid: true, keyId })
    // Only what v2 has: no v1 fields (ownerId, environment, requestId) in the data.
    const answer = await raw({ key: plain }, bearer(verifyOnly))
    expect(Object.keys(answer.body)).toEqual(['meta', 'data'])
    expect(Object.keys(answer.body.data).sort()).toEqual([
      'code',
      'enabled',
      'expires',
      'keyId',
      'meta',
      'name',
      'valid',
    ])
  })

  it('answers NOT_FOUND with nothing else for a key that does not exist', async () => {
    expect((await raw({ key: 'sk_nothing_here' }, bearer(verifyOnly))).body.data).toEqual({
      valid: false,
      code: 'NOT_FOUND',
    })
  })

  it('disable → DISABLED on the verifier, within the bound; enable → VALID again', async () => {
    const { keyId, key: plain } = await key()
    expect((await verify(verifyOnly, { key: plain })).code).toBe('VALID')
    expect((await stack.post('keys.updateKey', { keyId, enabled: false })).status).toBe(200)
    await eventually(async () => (await verify(verifyOnly, { key: plain })).code === 'DISABLED')
    expect(await verify(verifyOnly, { key: plain })).toMatchObject({ valid: false, keyId, enabled: false })
    expect((await stack.post('keys.updateKey', { keyId, enabled: true })).status).toBe(200)
    await eventually(async () => (await verify(verifyOnly, { key: plain })).valid)
  })

  it('a root key without verify_key for the key’s api learns nothing of it, and spends nothing', async () => {
    const { key: plain, keyId } = await key({ remaining: 5, ratelimit: { limit: 1, duration: 60_000 } })
    const readOnly = (await rootKey(['api.*.read_key', 'api.*.create_key'])).key
    const otherApi = (await rootKey([`api.${otherApiId}.verify_key`])).key
    const thisApi = (await rootKey([`api.${apiId}.verify_key`])).key
    for (const root of [readOnly, otherApi]) {
      expect((await raw({ key: plain, credits: { cost: 1 } }, bearer(root))).body).toEqual({
        meta: { requestId: expect.stringMatching(/^req_/) },
        data: { valid: false, code: 'NOT_FOUND' },
      })
    }
    // A disabled key too: NOT_FOUND, not DISABLED (nothing is learnt).
    const disabled = await key({ enabled: false })
    expect((await verify(otherApi, { key: disabled.key })).code).toBe('NOT_FOUND')
    // Neither the credits nor the one-call rate limit were touched by the hidden calls.
    expect(await verify(thisApi, { key: plain })).toMatchObject({ valid: true, keyId, credits: 4 })
    expect((await stack.getKey(keyId)).remaining).toBe(4)
  })

  it('a hidden key’s verifications are not counted in its usage either', async () => {
    const { key: plain, keyId } = await key()
    const otherApi = (await rootKey([`api.${otherApiId}.verify_key`])).key
    const thisApi = (await rootKey([`api.${apiId}.verify_key`])).key
    for (let i = 0; i < 3; i++) expect((await verify(otherApi, { key: plain })).code).toBe('NOT_FOUND')
    expect((await verify(thisApi, { key: plain })).code).toBe('VALID')
    await stack.ingestAnalytics()
    const counted = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/keys.getVerifications?keyId=${keyId}`,
      headers: { authorization: `Bearer ${TEST_ROOT_KEY}` },
    })
    expect(counted.statusCode).toBe(200)
    const days = counted.json().verifications as { success: number; rateLimited: number; usageExceeded: number }[]
    const total = days.reduce((sum, day) => sum + day.success + day.rateLimited + day.usageExceeded, 0)
    expect(total).toBe(1)
  })

  it('parses permission queries: AND binds tighter than OR, any case, parentheses', async () => {
    const { key: plain } = await key({ permissions: ['docs.read', 'docs.write', 'system:admin:*'] })
    const cases: [string, boolean][] = [
      ['docs.read', true],
      ['docs.delete', false],
      ['docs.read AND docs.write', true],
      ['docs.read AND docs.delete', false],
      ['docs.delete OR docs.write', true],
      ['docs.delete OR docs.read AND docs.write', true],
      ['(docs.delete OR docs.read) AND docs.nothing', false],
      ['docs.read and (docs.delete or docs.write)', true],
      // `*` is a character of a name, not a wildcard.
      ['system:admin:* AND docs.read', true],
      ['system:admin:read', false],
    ]
    for (const [permissions, valid] of cases) {
      const data = await verify(verifyOnly, { key: plain, permissions })
      expect({ permissions, code: data.code }).toEqual({
        permissions,
        code: valid ? 'VALID' : 'INSUFFICIENT_PERMISSIONS',
      })
      expect(data.permissions).toEqual(['docs.read', 'docs.write', 'system:admin:*'])
    }
  })

  it('refuses a query that does not parse with 400 and Unkey’s wording', async () => {
    const { key: plain } = await key()
    const cases: [string, string][] = [
      ['perm_1 AND', 'Unexpected end of query. Expected a permission identifier or opening parenthesis.'],
      [
        '(perm_1 AND perm_2',
        "Missing closing parenthesis ')' at position 18. Every opening parenthesis must have a matching closing parenthesis.",
      ],
      ['perm_1 AND ()', 'Empty parentheses found at position 12.'],
      ['AND perm_1', "Unexpected token 'AND' at position 0."],
      ['perm_1 $ perm_2', "Invalid character '$' found in query at position 7."],
    ]
    for (const [permissions, detail] of cases) {
      const answer = await raw({ key: plain, permissions }, bearer(verifyOnly))
      expect(answer, permissions).toMatchObject({
        status: 400,
        body: {
          error: {
            type: 'https://unkey.com/docs/errors/user/bad_request/permissions_query_syntax_error',
            errors: [{ location: 'body.permissions' }],
          },
        },
      })
      expect(answer.body.error.detail).toContain(detail)
    }
    await expect(verify(verifyOnly, { key: plain, permissions: 'a OR' })).rejects.toMatchObject({
      name: 'BadRequestErrorResponse',
    })
  })

  it('spends credits: the default 1, a cost, 0 free even when empty; USAGE_EXCEEDED keeps the balance', async () => {
    const { key: plain } = await key({ remaining: 5 })
    expect(await verify(verifyOnly, { key: plain })).toMatchObject({ valid: true, credits: 4 })
    expect(await verify(verifyOnly, { key: plain, credits: { cost: 4 } })).toMatchObject({ valid: true, credits: 0 })
    expect(await verify(verifyOnly, { key: plain })).toMatchObject({
      valid: false,
      code: 'USAGE_EXCEEDED',
      credits: 0,
    })
    expect(await verify(verifyOnly, { key: plain, credits: { cost: 0 } })).toMatchObject({ valid: true, credits: 0 })
    const bad = await raw({ key: plain, credits: { cost: -1 } }, bearer(verifyOnly))
    expect(bad).toMatchObject({ status: 400, body: { error: { errors: [{ location: 'body.credits.cost' }] } } })
  })

  it('rate limits: auto-applied, named and defined by the call, each with its id; an unknown name is 412', async () => {
    const { key: plain, keyId } = await key({
      ratelimits: [
        { name: 'auto-limit', limit: 1, duration: 60_000, autoApply: true },
        { name: 'requests', limit: 2, duration: 60_000 },
      ],
    })
    // Every call below in one minute's window (windows start on the wall clock's minutes).
    await clearOfWindowEdge(60_000)
    const first = await verify(verifyOnly, { key: plain, ratelimits: [{ name: 'requests' }] })
    expect(first).toMatchObject({ valid: true, code: 'VALID' })
    expect(first.ratelimits).toEqual([
      expect.objectContaining({ name: 'auto-limit', limit: 1, remaining: 0, exceeded: false, autoApply: true }),
      expect.objectContaining({ name: 'requests', limit: 2, remaining: 1, exceeded: false, autoApply: false }),
    ])
    for (const limit of first.ratelimits!) {
      expect(limit.id).toMatch(/^rl_[A-Za-z0-9]{8,}$/)
      expect(limit.reset).toBeGreaterThan(Date.now())
    }
    expect(first.ratelimits![0]!.id).not.toBe(first.ratelimits![1]!.id)
    const second = await verify(verifyOnly, { key: plain })
    expect(second).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    expect(second.ratelimits).toEqual([expect.objectContaining({ name: 'auto-limit', exceeded: true })])
    // The same limit has the same id in every answer.
    expect(second.ratelimits![0]!.id).toBe(first.ratelimits![0]!.id)

    const custom = await key()
    const defined = { name: 'uploads', cost: 15, limit: 20, duration: 60_000 }
    expect((await verify(verifyOnly, { key: custom.key, ratelimits: [defined] })).code).toBe('VALID')
    expect((await verify(verifyOnly, { key: custom.key, ratelimits: [defined] })).code).toBe('RATE_LIMITED')

    const unknown = await raw({ key: plain, ratelimits: [{ name: 'does-not-exist' }] }, bearer(verifyOnly))
    expect(unknown).toMatchObject({ status: 412, body: { error: { status: 412, title: 'Precondition Failed' } } })
    expect(unknown.body.error.detail).toContain(
      `ratelimit 'does-not-exist' was requested but does not exist for key '${keyId}' and there is no identity connected`,
    )
  })

  it('shows the identity with its limits, and counts its shared limit under the identity’s id', async () => {
    const externalId = `ext_${Math.random().toString(36).slice(2)}`
    const identity = await stack.post('identities.createIdentity', {
      externalId,
      meta: { tier: 'gold' },
      ratelimits: [{ name: 'tokens', limit: 4, duration: 1_800_000 }],
    })
    expect(identity.status).toBe(200)
    const { key: plain } = await key({ externalId, roles: [`reader-${externalId}`], permissions: ['domain.create'] })
    // Both calls below in one half hour's window (windows start on the wall clock's half hours).
    await clearOfWindowEdge(1_800_000)
    const data = await verify(verifyOnly, { key: plain, ratelimits: [{ name: 'tokens', cost: 4 }] })
    expect(data).toMatchObject({
      valid: true,
      permissions: ['domain.create'],
      roles: [`reader-${externalId}`],
      identity: {
        id: identity.body.identityId,
        externalId,
        meta: { tier: 'gold' },
        ratelimits: [{ name: 'tokens', limit: 4, duration: 1_800_000, autoApply: false }],
      },
    })
    expect(data.ratelimits![0]!.id).toBe(data.identity!.ratelimits![0]!.id)
    expect((await verify(verifyOnly, { key: plain, ratelimits: [{ name: 'tokens', cost: 4 }] })).code).toBe(
      'RATE_LIMITED',
    )
    const unknown = await raw({ key: plain, ratelimits: [{ name: 'missing' }] }, bearer(verifyOnly))
    expect(unknown.status).toBe(412)
    expect(unknown.body.error.detail).toContain(identity.body.identityId)
    expect(unknown.body.error.detail).toContain(externalId)
  })

  it('marks every limit without room exceeded, not only the first: exact and async, of an identity and of the key', async () => {
    for (const async of [false, true]) {
      const externalId = `ext_${Math.random().toString(36).slice(2)}`
      const limits = [
        { name: 'per-minute', limit: 2, duration: 60_000, async },
        { name: 'per-hour', limit: 2, duration: 3_600_000, async },
      ]
      expect((await stack.post('identities.createIdentity', { externalId, ratelimits: limits })).status).toBe(200)
      const roomy = { name: 'roomy', limit: 100, duration: 60_000, async }
      const { key: plain } = await key({ externalId, ratelimits: [roomy] })
      const names = [{ name: 'per-minute' }, { name: 'per-hour' }, { name: 'roomy' }]
      // Every call below in one hour's window (windows start on the wall clock's hours).
      await clearOfWindowEdge(3_600_000)
      for (let call = 0; call < 2; call++)
        expect((await verify(verifyOnly, { key: plain, ratelimits: names })).code, `async ${async}`).toBe('VALID')
      const refused = await verify(verifyOnly, { key: plain, ratelimits: names })
      expect(refused).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
      expect(
        refused.ratelimits!.map(({ name, exceeded, remaining }) => ({ name, exceeded, remaining })),
        `async ${async}`,
      ).toEqual([
        { name: 'per-minute', exceeded: true, remaining: 0 },
        { name: 'per-hour', exceeded: true, remaining: 0 },
        { name: 'roomy', exceeded: false, remaining: 98 },
      ])
      // The refused call was charged to none: the roomy limit alone lets the next call through, its third.
      const next = await verify(verifyOnly, { key: plain, ratelimits: [{ name: 'roomy' }] })
      expect(next.ratelimits, `async ${async}`).toEqual([expect.objectContaining({ name: 'roomy', remaining: 97 })])
      // v1's header names the first limit without room.
      const v1 = await stack.verifier.app.inject({
        method: 'POST',
        url: '/v1/keys.verifyKey',
        headers: { 'content-type': 'application/json' },
        payload: { key: plain, ratelimits: names },
      })
      expect(v1.headers['unkey-ratelimit-triggered'], `async ${async}`).toBe('per-minute')
    }
  })

  it('with async and exact limits: an async refusal reads no exact one, an exact refusal charges no async one', async () => {
    const externalId = `ext_${Math.random().toString(36).slice(2)}`
    const identityLimits = [{ name: 'async-full', limit: 1, duration: 3_600_000, async: true }]
    expect((await stack.post('identities.createIdentity', { externalId, ratelimits: identityLimits })).status).toBe(200)
    const { key: plain } = await key({
      externalId,
      ratelimits: [
        { name: 'exact-tight', limit: 1, duration: 3_600_000 },
        { name: 'async-roomy', limit: 10, duration: 3_600_000, async: true },
      ],
    })
    await clearOfWindowEdge(3_600_000)
    const pick = (names: string[]) => names.map((name) => ({ name }))
    // One call through the exact limit and the roomy async one: both spent once.
    expect((await verify(verifyOnly, { key: plain, ratelimits: pick(['exact-tight', 'async-roomy']) })).code).toBe(
      'VALID',
    )
    // The exact limit is full: refused, and the async one reports its room as it stands (not charged).
    const exactRefused = await verify(verifyOnly, { key: plain, ratelimits: pick(['exact-tight', 'async-roomy']) })
    expect(exactRefused.ratelimits!.map(({ name, exceeded, remaining }) => ({ name, exceeded, remaining }))).toEqual([
      { name: 'exact-tight', exceeded: true, remaining: 0 },
      { name: 'async-roomy', exceeded: false, remaining: 9 },
    ])
    // The identity's async limit, spent, then full: refused in memory, the exact limit not read, so not listed.
    expect((await verify(verifyOnly, { key: plain, ratelimits: pick(['async-full']) })).code).toBe('VALID')
    const asyncRefused = await verify(verifyOnly, { key: plain, ratelimits: pick(['async-full', 'exact-tight']) })
    expect(asyncRefused.code).toBe('RATE_LIMITED')
    expect(asyncRefused.ratelimits!.map(({ name, exceeded }) => ({ name, exceeded }))).toEqual([
      { name: 'async-full', exceeded: true },
    ])
  })

  it('a missing or malformed Authorization header is 400, a root key not valid 401, before the body is read', async () => {
    const { key: plain } = await key()
    expect(await raw({ key: plain }, JSON_ONLY)).toMatchObject({
      status: 400,
      body: { error: { type: expect.stringMatching(/authentication\/missing$/) } },
    })
    expect((await raw({ key: plain }, { ...JSON_ONLY, authorization: 'InvalidFormat' })).status).toBe(400)
    // An unknown root key with a body that is not even valid: 401 first.
    expect(await raw({ nonsense: true }, bearer('kgroot_not_a_root_key'))).toMatchObject({
      status: 401,
      body: { meta: { requestId: expect.stringMatching(/^req_/) }, error: { status: 401 } },
    })
    await expect(verify('kgroot_not_a_root_key', { key: plain })).rejects.toMatchObject({
      name: 'UnauthorizedErrorResponse',
    })
    // A v2 body refuses fields it does not define, and v1's shape.
    const v1Shape = await raw({ key: plain, apiId }, bearer(verifyOnly))
    expect(v1Shape).toMatchObject({ status: 400, body: { error: { errors: [{ location: 'body.apiId' }] } } })
  })

  it('the verifier refuses a revoked root key, and a rolled one, within the bound', async () => {
    const { key: plain } = await key()
    const revoked = await rootKey(['api.*.verify_key'])
    expect((await verify(revoked.key, { key: plain })).valid).toBe(true)
    expect((await stack.post('rootKeys.revokeRootKey', { rootKeyId: revoked.rootKeyId })).status).toBe(200)
    await eventually(async () => (await raw({ key: plain }, bearer(revoked.key))).status === 401)
    // …and the control plane at once (its own writes reach its verifier before the answer).
    expect((await raw({ key: plain }, bearer(revoked.key), stack.controlPlane)).status).toBe(401)

    const rolled = await rootKey(['api.*.verify_key'])
    expect((await verify(rolled.key, { key: plain })).valid).toBe(true)
    const roll = await stack.post('rootKeys.rollRootKey', { rootKeyId: rolled.rootKeyId })
    expect(roll.status).toBe(200)
    await eventually(async () => (await raw({ key: plain }, bearer(rolled.key))).status === 401)
    await eventually(async () => (await raw({ key: plain }, bearer(roll.body.key))).status === 200)
    expect((await verify(roll.body.key, { key: plain })).valid).toBe(true)
  })

  it('a revoked root key stays refused whatever a backfill that read it before the revoke writes', async () => {
    const { key: plain } = await key()
    const root = await rootKey(['api.*.verify_key'])
    const listedBeforeRevoke = await stack.backend.store.rootKeys.getRootKeyById(root.rootKeyId)
    expect((await stack.post('rootKeys.revokeRootKey', { rootKeyId: root.rootKeyId })).status).toBe(200)
    // A control plane starting meanwhile publishes what it listed: the tombstone wins.
    await new RootKeyEntities(stack.backend.store.entities).publish(listedBeforeRevoke!)
    await stack.verifier.verifier.pollNow()
    await eventually(async () => (await raw({ key: plain }, bearer(root.key))).status === 401)
    expect((await raw({ key: plain }, bearer(root.key), stack.controlPlane)).status).toBe(401)
  })

  it('publishes root keys stored without their record for verifiers (earlier releases) when a control plane starts', async () => {
    const { key: plain } = await key()
    const { key: rootKeyText, hash } = generateRootKey()
    // As an earlier release stored it: in the root-key store only.
    await stack.backend.store.rootKeys.createRootKey({
      id: newId('root'),
      hash,
      permissions: ['api.*.verify_key'],
      createdAt: 1,
    })
    expect((await raw({ key: plain }, bearer(rootKeyText))).status).toBe(401)
    const starting = await startTestControlPlane({ backend: stack.backend })
    try {
      await eventually(async () => (await raw({ key: plain }, bearer(rootKeyText))).status === 200)
    } finally {
      await starting.close()
    }
  })

  it('accepts KEYGATE_ROOT_KEY on the verifier until it is turned off, and again once turned on', async () => {
    const { key: plain } = await key()
    expect((await verify(TEST_ROOT_KEY, { key: plain })).valid).toBe(true)
    // Turning it off takes a stored root key with `*`; then through the store's switch, as the command line does.
    await rootKey(['*'])
    const rootKeys = new RootKeys({
      store: stack.backend.store,
      audit: new AuditLog(stack.backend.store.audit, systemClock, pino({ level: 'silent' }), auditedKey),
      clock: systemClock,
    })
    await rootKeys.setBootstrap(CLI_ACTOR, false)
    try {
      await eventually(async () => (await raw({ key: plain }, bearer(TEST_ROOT_KEY))).status === 401)
      expect((await raw({ key: plain }, bearer(TEST_ROOT_KEY), stack.controlPlane)).status).toBe(401)
    } finally {
      await rootKeys.setBootstrap(CLI_ACTOR, true)
    }
    await eventually(async () => (await raw({ key: plain }, bearer(TEST_ROOT_KEY))).status === 200)
  })
})
