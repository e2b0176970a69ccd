import { createHash, randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'

/** v2's identities.* through Unkey's SDK (its zod schemas check every answer), organised happy / error / security. */
onBothStores('v2 identities', {}, (stack) => {
  const sdk = () => unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
  const post = async (operation: string, payload: object, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const rootKeyWith = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return key
  }
  const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })
  const externalId = () => `user_${randomUUID()}`
  const create = async (body: object = {}) => {
    const created = await post('identities.createIdentity', { externalId: externalId(), ...body })
    expect(created.status, JSON.stringify(created.body)).toBe(200)
    return created.body.data.identityId as string
  }

  describe('happy', () => {
    it('creates an identity and reads it by id and by externalId, its rate limits as sent', async () => {
      const external = externalId()
      const ratelimits = [
        { name: 'requests', limit: 100, duration: 60_000, autoApply: true },
        { name: 'tokens', limit: 5_000, duration: 86_400_000 },
      ]
      const created = await sdk().identities.createIdentity({ externalId: external, meta: { plan: 'pro' }, ratelimits })
      const identityId = created.data.identityId
      expect(identityId).toMatch(/^id_/)
      const byId = (await sdk().identities.getIdentity({ identity: identityId })).data
      expect(byId).toEqual({
        id: identityId,
        externalId: external,
        meta: { plan: 'pro' },
        ratelimits: [
          { id: expect.stringMatching(/^rl_\w+$/), name: 'requests', limit: 100, duration: 60_000, autoApply: true },
          {
            id: expect.stringMatching(/^rl_\w+$/),
            name: 'tokens',
            limit: 5_000,
            duration: 86_400_000,
            autoApply: false,
          },
        ],
      })
      expect(byId.ratelimits![0]!.id).not.toBe(byId.ratelimits![1]!.id)
      expect((await sdk().identities.getIdentity({ identity: external })).data).toEqual(byId)
      // The same identity, as v1 shows it: one store under both wire formats.
      const v1 = await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/identities.getIdentity?externalId=${external}`,
        headers: ADMIN_HEADERS,
      })
      expect(v1.json()).toMatchObject({ id: identityId, meta: { plan: 'pro' }, ratelimits: [{ name: 'requests' }, {}] })
    })

    it('shows meta {} and ratelimits [] for an identity without them', async () => {
      const external = externalId()
      const identityId = (await sdk().identities.createIdentity({ externalId: external })).data.identityId
      expect((await sdk().identities.getIdentity({ identity: identityId })).data).toEqual({
        id: identityId,
        externalId: external,
        meta: {},
        ratelimits: [],
      })
    })

    it('updates meta and rate limits (replacing what is given, keeping what is left out), by id or externalId', async () => {
      const external = externalId()
      const identityId = await create({
        externalId: external,
        meta: { plan: 'free' },
        ratelimits: [{ name: 'requests', limit: 10, duration: 1_000, autoApply: false }],
      })
      const before = (await sdk().identities.getIdentity({ identity: identityId })).data.ratelimits!
      const updated = await sdk().identities.updateIdentity({
        identity: external,
        ratelimits: [
          { name: 'requests', limit: 20, duration: 2_000, autoApply: true },
          { name: 'burst', limit: 3, duration: 1_000 },
        ],
      })
      expect(updated.data).toEqual({
        id: identityId,
        externalId: external,
        meta: { plan: 'free' },
        ratelimits: [
          // The limit keeps its id while it keeps its name.
          { id: before[0]!.id, name: 'requests', limit: 20, duration: 2_000, autoApply: true },
          { id: expect.stringMatching(/^rl_/), name: 'burst', limit: 3, duration: 1_000, autoApply: false },
        ],
      })
      expect((await sdk().identities.getIdentity({ identity: identityId })).data).toEqual(updated.data)

      const metaOnly = await sdk().identities.updateIdentity({ identity: identityId, meta: { plan: 'pro' } })
      expect(metaOnly.data).toEqual({ ...updated.data, meta: { plan: 'pro' } })
      const cleared = await sdk().identities.updateIdentity({ identity: identityId, meta: {}, ratelimits: [] })
      expect(cleared.data).toEqual({ id: identityId, externalId: external, meta: {}, ratelimits: [] })
    })

    it('deletes an identity named by externalId or by id; it is gone afterwards', async () => {
      const external = externalId()
      const first = await create({ externalId: external })
      expect(await post('identities.deleteIdentity', { identity: external })).toMatchObject({ status: 200 })
      expect((await post('identities.getIdentity', { identity: first })).status).toBe(404)
      // The externalId is free again: another identity, deleted by its id through the SDK.
      const second = await create({ externalId: external })
      expect(second).not.toBe(first)
      await sdk().identities.deleteIdentity({ identity: second })
      await expect(sdk().identities.getIdentity({ identity: external })).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
      })
    })

    it("pages through identities with the SDK's own pager: every one once, the last page without a cursor", async () => {
      const tag = randomUUID().slice(0, 8)
      const made = [] as string[]
      for (let i = 0; i < 5; i++) made.push(await create({ externalId: `paged_${tag}_${i}` }))
      await create({ externalId: `other_${randomUUID()}` })
      const pages = [] as { ids: string[]; pagination: { cursor?: string; hasMore: boolean } }[]
      // search matches the externalId ignoring case: the five made here, none other.
      for await (const page of await sdk().identities.listIdentities({
        limit: 2,
        search: `PAGED_${tag.toUpperCase()}`,
      })) {
        pages.push({ ids: page.result.data.map((identity) => identity.id), pagination: page.result.pagination })
      }
      expect(pages.map((page) => page.ids.length)).toEqual([2, 2, 1])
      expect(pages.flatMap((page) => page.ids)).toEqual(made)
      expect(pages.map((page) => page.pagination.hasMore)).toEqual([true, true, false])
      expect(pages[2]!.pagination.cursor).toBeUndefined()

      // A page that ends exactly at the last identity carries no cursor either: nothing empty is asked for.
      const exact = await post('identities.listIdentities', { limit: 5, search: `paged_${tag}` })
      expect(exact.body.data).toHaveLength(5)
      expect(exact.body.pagination).toEqual({ hasMore: false })
    })

    it('lists with rate limits and meta, by id search too', async () => {
      const identityId = await create({
        meta: { tier: 2 },
        ratelimits: [{ name: 'requests', limit: 1, duration: 1_000, autoApply: true }],
      })
      const listed = await sdk().identities.listIdentities({ search: identityId })
      expect(listed.result.data).toEqual([
        {
          id: identityId,
          externalId: expect.any(String),
          meta: { tier: 2 },
          ratelimits: [
            { id: expect.stringMatching(/^rl_/), name: 'requests', limit: 1, duration: 1_000, autoApply: true },
          ],
        },
      ])
    })
  })

  describe('errors', () => {
    it('409 for an externalId that already has an identity, typed as Unkey types it', async () => {
      const external = externalId()
      await create({ externalId: external })
      const again = await post('identities.createIdentity', { externalId: external })
      expect(again).toMatchObject({
        status: 409,
        body: {
          error: {
            title: 'Conflict',
            type: 'https://unkey.com/docs/errors/unkey/data/identity_already_exists',
            detail: expect.stringContaining('already exists'),
          },
        },
      })
      await expect(sdk().identities.createIdentity({ externalId: external })).rejects.toMatchObject({
        name: 'ConflictErrorResponse',
      })
    })

    it('404 for an identity that does not exist, on get, update and delete', async () => {
      for (const operation of ['getIdentity', 'updateIdentity', 'deleteIdentity']) {
        const missing = await post(`identities.${operation}`, { identity: 'id_nobody' })
        expect(missing, operation).toMatchObject({
          status: 404,
          body: { error: { type: 'https://unkey.com/docs/errors/unkey/data/identity_not_found' } },
        })
      }
    })

    it("400 for what Unkey's schemas refuse, naming the field", async () => {
      const cases: [string, object, string][] = [
        ['createIdentity', {}, 'body.externalId'],
        ['createIdentity', { externalId: '' }, 'body.externalId'],
        ['createIdentity', { externalId: 'has space' }, 'body.externalId'],
        ['createIdentity', { externalId: externalId(), ratelimits: [{ limit: 1, duration: 1_000 }] }, 'body'],
        [
          'createIdentity',
          { externalId: externalId(), ratelimits: [{ name: 'x', limit: 1, duration: 1_000 }] },
          'body',
        ],
        [
          'createIdentity',
          { externalId: externalId(), ratelimits: [{ name: 'abc', limit: 0, duration: 1_000 }] },
          'body',
        ],
        [
          'createIdentity',
          { externalId: externalId(), ratelimits: [{ name: 'abc', limit: 1, duration: 999 }] },
          'body',
        ],
        ['getIdentity', {}, 'body.identity'],
        ['getIdentity', { identity: '' }, 'body.identity'],
        ['getIdentity', { identity: 'x', externalId: 'y' }, 'body'],
        ['updateIdentity', { identity: 'x', environment: 'default' }, 'body'],
        ['listIdentities', { limit: 101 }, 'body.limit'],
        ['listIdentities', { limit: 0 }, 'body.limit'],
      ]
      for (const [operation, body, location] of cases) {
        const refused = await post(`identities.${operation}`, body)
        expect(refused, `${operation} ${JSON.stringify(body)}`).toMatchObject({
          status: 400,
          body: { error: { type: 'https://unkey.com/docs/errors/unkey/application/invalid_input' } },
        })
        expect(refused.body.error.errors[0].location, JSON.stringify(body)).toContain(location)
      }
      await expect(sdk().identities.getIdentity({ identity: '' })).rejects.toMatchObject({
        name: 'BadRequestErrorResponse',
      })
    })

    it('a limit named twice and meta too large are 400s (invalid input), not v1’s 409 and 413', async () => {
      const identityId = await create()
      const twice = [
        { name: 'requests', limit: 1, duration: 1_000, autoApply: false },
        { name: 'requests', limit: 2, duration: 1_000, autoApply: false },
      ]
      for (const [operation, body] of [
        ['createIdentity', { externalId: externalId(), ratelimits: twice }],
        ['updateIdentity', { identity: identityId, ratelimits: twice }],
        ['createIdentity', { externalId: externalId(), meta: { blob: 'x'.repeat(70_000) } }],
        ['updateIdentity', { identity: identityId, meta: { blob: 'x'.repeat(70_000) } }],
      ] as const) {
        const refused = await post(`identities.${operation}`, body)
        expect(refused, operation).toMatchObject({ status: 400, body: { error: { status: 400 } } })
      }
      // A root key that may not update identities learns that first, whatever the input.
      const stranger = headersOf(await rootKeyWith(['api.*.read_api']))
      const refused = await post('identities.updateIdentity', { identity: identityId, ratelimits: twice }, stranger)
      expect(refused.status).toBe(403)
      const tooMany = Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}`, i]))
      expect((await post('identities.updateIdentity', { identity: identityId, meta: tooMany })).status).toBe(400)
      // Nothing changed.
      expect((await post('identities.getIdentity', { identity: identityId })).body.data.ratelimits).toEqual([])
    })

    it('accepts unknown fields on createIdentity, as Unkey’s schema does', async () => {
      const created = await post('identities.createIdentity', { externalId: externalId(), environment: 'x' })
      expect(created.status).toBe(200)
    })
  })

  describe('security', () => {
    it('a list refused for an identity the root key may not read names no identity', async () => {
      const mine = await create()
      const theirs = await create()
      const reader = headersOf(await rootKeyWith([`identity.${mine}.read_identity`]))
      const refused = await post('identities.listIdentities', { limit: 100 }, reader)
      expect(refused.status).toBe(403)
      expect(refused.body.error.title).toBe('Insufficient Permissions')
      for (const id of [mine, theirs]) expect(JSON.stringify(refused.body)).not.toContain(id)
    })

    it("a root key scoped to an api cannot give its keys another team's identity (createKey, updateKey, migrateKeys)", async () => {
      const teamB = externalId()
      await create({ externalId: teamB, meta: { plan: 'secret' } })
      const api = (await post('apis.createApi', { name: 'team-a' })).body.data.apiId as string
      const scoped = headersOf(await rootKeyWith([`api.${api}.create_key`, `api.${api}.update_key`]))
      const own = (await post('keys.createKey', { apiId: api })).body.data.keyId as string
      const hash = createHash('sha256').update(randomUUID()).digest('base64')
      for (const [operation, body] of [
        ['keys.createKey', { apiId: api, externalId: teamB }],
        ['keys.updateKey', { keyId: own, externalId: teamB }],
        ['keys.migrateKeys', { migrationId: 'migration', apiId: api, keys: [{ hash, externalId: teamB }] }],
      ] as const) {
        const refused = await post(operation, body, scoped)
        expect(refused.status, `${operation}: ${JSON.stringify(refused.body)}`).toBe(403)
        expect(refused.body.error.detail).toContain('identity.*.read_identity')
      }
      const keys = (await post('apis.listKeys', { apiId: api })).body.data as { keyId: string; identity?: object }[]
      expect(keys.map((key) => [key.keyId, key.identity])).toEqual([[own, undefined]])
    })

    it('401 for an unknown root key, 400 for none', async () => {
      await expect(
        unkeySdk(stack.controlPlane, 'wrong').identities.getIdentity({ identity: 'x' }),
      ).rejects.toMatchObject({
        name: 'UnauthorizedErrorResponse',
      })
      const none = await post('identities.getIdentity', { identity: 'x' }, { 'content-type': 'application/json' })
      expect(none.status).toBe(400)
    })

    it('403 without the identity permission each call needs', async () => {
      const identityId = await create()
      const readOnly = await rootKeyWith(['identity.*.read_identity'])
      const limited = unkeySdk(stack.controlPlane, readOnly)
      expect((await limited.identities.getIdentity({ identity: identityId })).data.id).toBe(identityId)
      await expect(limited.identities.createIdentity({ externalId: externalId() })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/authorization/insufficient_permissions' } },
      })
      await expect(limited.identities.updateIdentity({ identity: identityId, meta: {} })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
      })
      // The SDK types deleteIdentity's errors only as application/problem+json (Unkey's server answers them
      // application/json, so its SDK sees a generic APIError there): Keygate answers what the SDK reads.
      await expect(limited.identities.deleteIdentity({ identity: identityId })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
        statusCode: 403,
      })
      const nothing = unkeySdk(stack.controlPlane, await rootKeyWith(['api.*.read_api']))
      await expect(nothing.identities.getIdentity({ identity: identityId })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
      })
      await expect(nothing.identities.listIdentities({})).rejects.toMatchObject({ name: 'ForbiddenErrorResponse' })
      // An empty page too: whether a search matches nothing or something it may not read, a stranger learns nothing.
      await expect(nothing.identities.listIdentities({ search: `none-${identityId}-none` })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
      })
      // The identity is untouched.
      expect((await post('identities.getIdentity', { identity: identityId })).status).toBe(200)
    })

    it('a permission on one identity reads, updates and deletes that one only, learning nothing of others', async () => {
      const mine = externalId()
      const mineId = await create({ externalId: mine })
      const theirsId = await create()
      const actions = ['read_identity', 'update_identity', 'delete_identity']
      const key = await rootKeyWith(actions.map((action) => `identity.${mineId}.${action}`))
      const headers = headersOf(key)
      expect((await post('identities.getIdentity', { identity: mine }, headers)).status).toBe(200)
      expect((await post('identities.updateIdentity', { identity: mineId, meta: { a: 1 } }, headers)).status).toBe(200)
      expect((await post('identities.getIdentity', { identity: theirsId }, headers)).status).toBe(403)
      expect((await post('identities.updateIdentity', { identity: theirsId, meta: {} }, headers)).status).toBe(403)
      // One that does not exist is a 403 too: the key may not learn which names are taken.
      expect((await post('identities.getIdentity', { identity: 'nobody_at_all' }, headers)).status).toBe(403)
      // Listing needs read on every identity listed (Unkey's check): here, the others are not its to read.
      expect((await post('identities.listIdentities', {}, headers)).status).toBe(403)
      expect((await post('identities.listIdentities', { search: mineId }, headers)).status).toBe(200)
      expect((await post('identities.deleteIdentity', { identity: theirsId }, headers)).status).toBe(403)
      expect((await post('identities.deleteIdentity', { identity: mineId }, headers)).status).toBe(200)
    })
  })
})
