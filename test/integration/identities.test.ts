import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ADMIN_HEADERS, onBothStores, type StoreStack } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

/** identities.*, organised as Unkey's route tests are (happy, error, security), and keys bound by externalId. */
onBothStores('identities', {}, (stack) => {
  const { post } = stack
  const get = (path: string, headers: Record<string, string> = ADMIN_HEADERS) => getAs(stack, path, headers)
  const create = async (body: object = {}) => {
    const created = await post('identities.createIdentity', { externalId: randomUUID(), ...body })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return created.body.identityId as string
  }
  const headersOf = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  }
  /** Waits until the separate verifier's answer reflects a change (immediate on memory, ms on Redis). */
  const eventually = (check: () => Promise<boolean>) => waitFor(check, 'the change to reach the verifier', 2_000, 2)

  describe('happy', () => {
    it('creates an identity, found by id and by externalId, with meta and rate limits', async () => {
      const externalId = randomUUID()
      const ratelimits = [
        { name: 'tokens', limit: 10, duration: 1_000 },
        { name: 'requests', limit: 1, duration: 60_000, autoApply: true },
      ]
      const created = await post('identities.createIdentity', { externalId, meta: { hello: 'world' }, ratelimits })
      expect(created).toMatchObject({ status: 200, body: { identityId: expect.stringMatching(/^id_/) } })
      const identityId = created.body.identityId
      const expected = { id: identityId, externalId, meta: { hello: 'world' }, ratelimits }
      expect((await get(`identities.getIdentity?identityId=${identityId}`)).body).toEqual(expected)
      expect((await get(`identities.getIdentity?externalId=${externalId}`)).body).toEqual(expected)
      // The id wins when both are given.
      expect((await get(`identities.getIdentity?identityId=${identityId}&externalId=nobody`)).status).toBe(200)
    })

    it('shows meta {} and ratelimits [] for an identity without them', async () => {
      const externalId = randomUUID()
      const identityId = await create({ externalId })
      expect((await get(`identities.getIdentity?identityId=${identityId}`)).body).toEqual({
        id: identityId,
        externalId,
        meta: {},
        ratelimits: [],
      })
    })

    it('lists identities a page at a time, with their limits, and none of another environment', async () => {
      const ids = [] as string[]
      for (let i = 0; i < 5; i++) ids.push(await create({ ratelimits: [{ name: 'n', limit: 10, duration: 1_000 }] }))
      const all = (await get('identities.listIdentities')).body
      expect(all.total).toBeGreaterThanOrEqual(5)
      expect(all.identities.length).toBeLessThanOrEqual(100)
      expect(all.identities.find((i: { id: string }) => i.id === ids[0])).toMatchObject({
        ratelimits: [{ name: 'n', limit: 10, duration: 1_000 }],
      })
      const first = (await get('identities.listIdentities?limit=2')).body
      expect(first.identities).toHaveLength(2)
      expect(first.cursor).toBeDefined()
      const second = (await get(`identities.listIdentities?limit=3&cursor=${first.cursor}`)).body
      const seen = new Set([...first.identities, ...second.identities].map((i: { id: string }) => i.id))
      expect(seen.size).toBe(5)
      // Oldest first: ids sort by creation time.
      const listed = all.identities.map((i: { id: string }) => i.id)
      expect(listed).toEqual([...listed].sort())
      expect((await get('identities.listIdentities?environment=staging')).body).toEqual({ identities: [], total: 0 })
    })

    it('updates by id or externalId: ratelimits are replaced, meta is replaced, each leaves the other', async () => {
      const externalId = randomUUID()
      const identityId = await create({ externalId, ratelimits: [{ name: 'old', limit: 123, duration: 131_251 }] })
      const ratelimits = [
        { name: randomUUID(), limit: 10, duration: 1_000 },
        { name: '10/10s', limit: 10, duration: 10_000 },
      ]
      const byExternalId = await post('identities.updateIdentity', { externalId, environment: 'default', ratelimits })
      expect(byExternalId).toMatchObject({
        status: 200,
        body: { id: identityId, externalId, meta: {}, ratelimits },
      })
      // The same limits again, many times: still exactly these.
      for (let i = 0; i < 3; i++) {
        expect((await post('identities.updateIdentity', { identityId, ratelimits })).body.ratelimits).toEqual(
          ratelimits,
        )
      }
      const withMeta = await post('identities.updateIdentity', { identityId, meta: { plan: 'pro' } })
      expect(withMeta.body).toEqual({ id: identityId, externalId, meta: { plan: 'pro' }, ratelimits })
      // {} clears the meta, [] the limits.
      const cleared = await post('identities.updateIdentity', { identityId, meta: {}, ratelimits: [] })
      expect(cleared.body).toEqual({ id: identityId, externalId, meta: {}, ratelimits: [] })
      expect((await get(`identities.getIdentity?identityId=${identityId}`)).body).toEqual(cleared.body)
    })

    it('deletes an identity; its externalId can be used again, by another identity', async () => {
      const externalId = randomUUID()
      const identityId = await create({ externalId })
      expect(await post('identities.deleteIdentity', { identityId })).toEqual({ status: 200, body: {} })
      expect((await get(`identities.getIdentity?identityId=${identityId}`)).status).toBe(404)
      expect((await get(`identities.getIdentity?externalId=${externalId}`)).status).toBe(404)
      const again = await create({ externalId })
      expect(again).not.toBe(identityId)
      // The old id does not find the new identity.
      expect((await get(`identities.getIdentity?identityId=${identityId}`)).status).toBe(404)
      expect((await post('identities.deleteIdentity', { identityId })).status).toBe(404)
      const listed = (await get('identities.listIdentities')).body.identities.map((i: { id: string }) => i.id)
      expect(listed).toContain(again)
      expect(listed).not.toContain(identityId)
    })
  })

  describe('error', () => {
    it.each([
      ['empty', ''],
      ['short', 'ab'],
    ])('refuses an %s externalId with 400', async (_, externalId) => {
      expect(await post('identities.createIdentity', { externalId })).toMatchObject({
        status: 400,
        body: { error: { code: 'BAD_REQUEST', message: expect.stringMatching(/^externalId: /) } },
      })
    })

    it('answers 409 for an externalId an identity has already', async () => {
      const externalId = newId('id')
      await create({ externalId })
      expect(await post('identities.createIdentity', { externalId })).toMatchObject({
        status: 409,
        body: {
          error: {
            code: 'CONFLICT',
            message: `Identity with externalId "${externalId}" already exists in this workspace`,
          },
        },
      })
    })

    it('answers 404 for an identity that does not exist, by id or externalId', async () => {
      const identityId = newId('id')
      expect(await get(`identities.getIdentity?identityId=${identityId}`)).toMatchObject({
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: `identity ${identityId} not found` } },
      })
      expect((await get('identities.getIdentity?externalId=nobody-at-all')).status).toBe(404)
      expect(await post('identities.deleteIdentity', { identityId })).toMatchObject({
        status: 404,
        body: { error: { code: 'NOT_FOUND', message: `identity ${identityId} not found` } },
      })
      expect((await post('identities.updateIdentity', { identityId, meta: { a: 1 } })).status).toBe(404)
      // An identity is only in the default environment.
      const externalId = randomUUID()
      await create({ externalId })
      expect((await post('identities.updateIdentity', { externalId, environment: 'other', meta: {} })).status).toBe(404)
    })

    it('needs an identityId or an externalId to find one', async () => {
      expect(await post('identities.updateIdentity', {})).toMatchObject({
        status: 400,
        body: { error: { code: 'BAD_REQUEST', message: 'Provide either identityId or externalId' } },
      })
      expect((await get('identities.getIdentity')).status).toBe(400)
    })

    it('answers 409 for two limits of one name, and 400 for a bad limit', async () => {
      const identityId = await create()
      const name = 'requests'
      const twice = [
        { name, limit: 10, duration: 20_000 },
        { name, limit: 10, duration: 124_124 },
      ]
      expect(await post('identities.updateIdentity', { identityId, ratelimits: twice })).toMatchObject({
        status: 409,
        body: {
          error: { code: 'CONFLICT', message: `Ratelimit with name "${name}" is already defined in the request` },
        },
      })
      expect((await post('identities.createIdentity', { externalId: randomUUID(), ratelimits: twice })).status).toBe(
        409,
      )
      // Unkey v1's order: the input is refused before the identity is looked up, so before its 404 and its 403.
      const missing = { identityId: newId('id'), ratelimits: twice }
      expect((await post('identities.updateIdentity', missing)).status).toBe(409)
      const stranger = await headersOf([`identity.${newId('id')}.update_identity`])
      const refused = await post(
        'identities.updateIdentity',
        { identityId, ratelimits: twice },
        stack.controlPlane,
        stranger,
      )
      expect(refused.status).toBe(409)
      for (const limit of [
        { name, limit: 0, duration: 1_000 },
        { name, limit: 1, duration: 999 },
        { name: '', limit: 1, duration: 1_000 },
        { name, limit: 1 },
      ]) {
        expect((await post('identities.updateIdentity', { identityId, ratelimits: [limit] })).status).toBe(400)
      }
    })
  })

  describe('security', () => {
    it('takes identity.<id>.<action> for that identity only, and the wildcard for any', async () => {
      const identityId = await create()
      const other = await create()
      const own = await headersOf([`identity.${identityId}.read_identity`, randomUUID()])
      expect((await get(`identities.getIdentity?identityId=${identityId}`, own)).status).toBe(200)
      expect((await get(`identities.getIdentity?identityId=${other}`, own)).status).toBe(403)
      // Found by externalId, the permission is checked on the identity found; one it finds none for is a 403.
      expect((await get('identities.getIdentity?externalId=nobody-at-all', own)).status).toBe(403)
      const wildcard = await headersOf(['identity.*.read_identity'])
      expect((await get(`identities.getIdentity?identityId=${other}`, wildcard)).status).toBe(200)
      expect((await get('identities.getIdentity?externalId=nobody-at-all', wildcard)).status).toBe(404)
      // Unkey's: identity.<environment>.read_identity lists the environment.
      expect((await get('identities.listIdentities', await headersOf(['identity.default.read_identity']))).status).toBe(
        200,
      )
      expect((await get('identities.listIdentities', own)).status).toBe(403)
      const deleter = await headersOf([`identity.${identityId}.delete_identity`])
      expect((await post('identities.deleteIdentity', { identityId: other }, stack.controlPlane, deleter)).status).toBe(
        403,
      )
      expect((await post('identities.deleteIdentity', { identityId }, stack.controlPlane, deleter)).status).toBe(200)
      const reader = await headersOf(['identity.*.read_identity'])
      for (const [path, body] of [
        ['identities.createIdentity', { externalId: randomUUID() }],
        ['identities.updateIdentity', { identityId: other, meta: {} }],
        ['identities.deleteIdentity', { identityId: other }],
      ] as const) {
        expect((await post(path, body, stack.controlPlane, reader)).status, path).toBe(403)
      }
    })
  })

  describe('keys bound by externalId', () => {
    let apiId: string
    beforeAll(async () => {
      apiId = (await post('apis.createApi', { name: 'identities' })).body.apiId
    })

    it('createKey makes the identity of a new externalId (with identity.*.create_identity), and links to an existing one', async () => {
      const externalId = randomUUID()
      const creator = await headersOf([`api.${apiId}.create_key`, 'identity.*.create_identity'])
      const first = await post('keys.createKey', { apiId, externalId }, stack.controlPlane, creator)
      expect(first.status).toBe(200)
      const identity = (await get(`identities.getIdentity?externalId=${externalId}`)).body
      expect(identity).toMatchObject({ id: expect.stringMatching(/^id_/), externalId, meta: {}, ratelimits: [] })
      // The deprecated ownerId binds the same way.
      const second = await post('keys.createKey', { apiId, ownerId: externalId })
      for (const key of [first.body, second.body]) {
        expect(await stack.verify({ key: key.key })).toMatchObject({
          valid: true,
          ownerId: externalId,
          identity: { id: identity.id, externalId },
        })
        expect(await stack.getKey(key.keyId)).toMatchObject({ identity: { id: identity.id, externalId } })
      }
    })

    it("a root key scoped to an api cannot give its keys another team's identity, on any call that binds one", async () => {
      // team-b's identity, with meta and a shared limit its own keys spend.
      const teamB = `team-b-${randomUUID()}`
      const identityId = await create({ externalId: teamB, meta: { plan: 'secret' } })
      const { body: otherApi } = await post('apis.createApi', { name: 'team-a' })
      const scoped = await headersOf([`api.${otherApi.apiId}.create_key`, `api.${otherApi.apiId}.read_key`])
      expect((await get(`identities.getIdentity?externalId=${teamB}`, scoped)).status).toBe(403)
      const updater = await headersOf([`api.${otherApi.apiId}.update_key`])
      const { body: own } = await post('keys.createKey', { apiId: otherApi.apiId })
      const refusals = [
        await post('keys.createKey', { apiId: otherApi.apiId, externalId: teamB }, stack.controlPlane, scoped),
        await post('keys.createKey', { apiId: otherApi.apiId, ownerId: teamB }, stack.controlPlane, scoped),
        await post('keys.updateKey', { keyId: own.keyId, externalId: teamB }, stack.controlPlane, updater),
        await post(
          'migrations.createKeys',
          [{ apiId: otherApi.apiId, plaintext: randomUUID(), externalId: teamB }],
          stack.controlPlane,
          scoped,
        ),
        // An identity that does not exist yet cannot be made either, and the answer is the same: nothing learnt.
        await post('keys.createKey', { apiId: otherApi.apiId, externalId: randomUUID() }, stack.controlPlane, scoped),
        // Refused before anything is made for it: not the permission it names either.
        await post(
          'keys.createKey',
          { apiId: otherApi.apiId, externalId: teamB, permissions: [`made.never.${identityId}`] },
          stack.controlPlane,
          await headersOf([`api.${otherApi.apiId}.create_key`, 'rbac.*.create_permission']),
        ),
      ]
      for (const refused of refusals) {
        expect(refused.status, JSON.stringify(refused.body)).toBe(403)
        expect(refused.body.error).toMatchObject({
          code: 'INSUFFICIENT_PERMISSIONS',
          message:
            'the root key needs identity.*.read_identity to give a key an identity that exists (externalId), or identity.*.create_identity to create it',
        })
        // Not the identity's id, nor anything else of it.
        expect(JSON.stringify(refused.body)).not.toContain(identityId)
      }
      const permissions = (await get('permissions.listPermissions')).body as { slug: string }[]
      expect(permissions.map((permission) => permission.slug)).not.toContain(`made.never.${identityId}`)
      // Rerolling a key of team-b's (bound by a root key that may) hands out a new key of team-b: refused too.
      const { body: theirs } = await post('keys.createKey', { apiId: otherApi.apiId, externalId: teamB })
      const reroller = await headersOf([`api.${otherApi.apiId}.create_key`, `api.${otherApi.apiId}.update_key`])
      const rerolled = await post('keys.rerollKey', { keyId: theirs.keyId }, stack.controlPlane, reroller)
      expect(rerolled.status, JSON.stringify(rerolled.body)).toBe(403)
      await post('keys.deleteKey', { keyId: theirs.keyId })
      // Nothing was written: the api holds only its own key, unbound.
      const keys = (await get(`apis.listKeys?apiId=${otherApi.apiId}`)).body.keys as { id: string; identity?: object }[]
      expect(keys.map((key) => key.id)).toEqual([own.keyId])
      expect(keys[0]!.identity).toBeUndefined()
      // With the right to read team-b's identity (its own, not every one), binding is allowed.
      const reader = await headersOf([`api.${otherApi.apiId}.create_key`, `identity.${identityId}.read_identity`])
      const bound = await post(
        'keys.createKey',
        { apiId: otherApi.apiId, externalId: teamB },
        stack.controlPlane,
        reader,
      )
      expect(bound.status, JSON.stringify(bound.body)).toBe(200)
    })

    it('updateKey binds a key to its new externalId’s identity, and null unbinds it', async () => {
      const { body: key } = await post('keys.createKey', { apiId })
      expect((await stack.verify({ key: key.key })).identity).toBeUndefined()
      const externalId = randomUUID()
      expect((await post('keys.updateKey', { keyId: key.keyId, externalId })).status).toBe(200)
      const identity = (await get(`identities.getIdentity?externalId=${externalId}`)).body
      await eventually(async () => (await stack.verify({ key: key.key })).identity?.id === identity.id)
      await post('keys.updateKey', { keyId: key.keyId, externalId: null })
      await eventually(async () => (await stack.verify({ key: key.key })).identity === undefined)
      // The identity stays.
      expect((await get(`identities.getIdentity?identityId=${identity.id}`)).status).toBe(200)
    })

    it('an updateKey refused for its content creates no identity, role or permission', async () => {
      const { body: key } = await post('keys.createKey', { apiId })
      const externalId = randomUUID()
      const role = `refused-${externalId}`
      const refused = await post('keys.updateKey', {
        keyId: key.keyId,
        externalId,
        roles: [{ name: role, create: true }],
        refill: { interval: 'daily', amount: 10 },
      })
      expect(refused.status).toBe(400)
      expect((await get(`identities.getIdentity?externalId=${externalId}`)).status).toBe(404)
      const roles = (await get('permissions.listRoles')).body as { name: string }[]
      expect(roles.map((r) => r.name)).not.toContain(role)
    })

    it('a createKey refused for its fields, its api or a role makes no identity and no permission (v1 and v2)', async () => {
      const v2 = async (payload: object) => {
        const response = await stack.controlPlane.app.inject({
          method: 'POST',
          url: '/v2/keys.createKey',
          headers: ADMIN_HEADERS,
          payload,
        })
        return { status: response.statusCode, body: response.json() }
      }
      const withoutRoles = await headersOf([
        `api.${apiId}.create_key`,
        'identity.*.create_identity',
        'rbac.*.create_permission',
      ])
      const calls: [number, (fields: { externalId: string; permissions: string[] }) => Promise<{ status: number }>][] =
        [
          [400, (fields) => post('keys.createKey', { apiId, ...fields, expires: 1_000 })],
          [404, (fields) => post('keys.createKey', { apiId: newId('api'), ...fields })],
          [403, (fields) => post('keys.createKey', { apiId, ...fields, roles: ['new-role'] }, undefined, withoutRoles)],
          [400, (fields) => v2({ apiId, ...fields, expires: 1_000 })],
          [404, (fields) => v2({ apiId: newId('api'), ...fields })],
          [404, (fields) => v2({ apiId, ...fields, roles: ['nobody'] })],
        ]
      for (const [status, call] of calls) {
        const externalId = randomUUID()
        const permission = `made.never.${externalId}`
        const refused = await call({ externalId, permissions: [permission] })
        expect({ externalId, status: refused.status }).toEqual({ externalId, status })
        expect((await get(`identities.getIdentity?externalId=${externalId}`)).status).toBe(404)
        const permissions = (await get('permissions.listPermissions')).body as { slug: string }[]
        expect(permissions.map((made) => made.slug)).not.toContain(permission)
      }
    })

    it('createKey and migrations.createKeys refuse an ownerId other than the externalId, and take one that agrees', async () => {
      const externalId = randomUUID()
      const other = { externalId, ownerId: `${externalId}-other` }
      for (const refused of [
        await post('keys.createKey', { apiId, ...other }),
        await post('migrations.createKeys', [{ apiId, plaintext: randomUUID(), ...other }]),
      ]) {
        expect(refused).toMatchObject({
          status: 400,
          body: { error: { code: 'BAD_REQUEST', message: 'externalId: differs from its alias ownerId' } },
        })
      }
      expect((await get(`identities.getIdentity?externalId=${externalId}`)).status).toBe(404)
      const agreed = await post('keys.createKey', { apiId, externalId, ownerId: externalId })
      expect(agreed.status, JSON.stringify(agreed.body)).toBe(200)
      expect(await stack.getKey(agreed.body.keyId)).toMatchObject({ ownerId: externalId, identity: { externalId } })
    })

    it('every verifier follows a change to the identity’s meta, and its deletion', async () => {
      const externalId = randomUUID()
      const identityId = await create({ externalId, meta: { plan: 'free' } })
      const { body: key } = await post('keys.createKey', { apiId, externalId })
      expect(await stack.verify({ key: key.key })).toMatchObject({
        identity: { id: identityId, externalId, meta: { plan: 'free' } },
      })
      await post('identities.updateIdentity', { identityId, meta: { plan: 'pro' } })
      await eventually(async () => (await stack.verify({ key: key.key })).identity?.meta?.plan === 'pro')
      await post('identities.deleteIdentity', { identityId })
      await eventually(async () => (await stack.verify({ key: key.key })).identity === undefined)
      // The key keeps its externalId.
      expect(await stack.verify({ key: key.key })).toMatchObject({ valid: true, ownerId: externalId })
    })
  })
})

async function getAs(stack: StoreStack, path: string, headers: Record<string, string>) {
  const { authorization } = headers
  const response = await stack.controlPlane.app.inject({
    method: 'GET',
    url: `/v1/${path}`,
    headers: authorization === undefined ? {} : { authorization },
  })
  return { status: response.statusCode, body: response.json() }
}
