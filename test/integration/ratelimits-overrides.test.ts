import { randomUUID } from 'node:crypto'
import { beforeAll, expect, it } from 'vitest'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { namespaceOf, rootKeyWith } from '../support/ratelimits.js'

/**
 * ratelimits.setOverride, getOverride, listOverrides and deleteOverride: Unkey's happy, error and security tests of
 * each (v1_ratelimits_*Override.*.test.ts), re-expressed, on both stores.
 */
onBothStores('rate-limit overrides', {}, (stack) => {
  /** A namespace of the test's own, made by a first limit call, and its id. */
  let name: string
  let namespaceId: string
  beforeAll(async () => {
    name = `ns-${randomUUID()}`
    await stack.post('ratelimits.limit', { namespace: name, identifier: 'x', limit: 1, duration: 1_000 })
    namespaceId = (await namespaceOf(stack.backend, name))!.id
  })

  const get = async (path: string, query: Record<string, string>, headers = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/${path}?${new URLSearchParams(query).toString()}`,
      headers,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const set = (body: object, headers = ADMIN_HEADERS) =>
    stack.post('ratelimits.setOverride', body, stack.controlPlane, headers)

  it('sets an override, by namespace id or name, and changes it in place (same id)', async () => {
    const identifier = randomUUID()
    const first = await set({ namespaceId, identifier, limit: 10, duration: 6_500, async: true })
    expect(first.status).toBe(200)
    expect(first.body.overrideId).toMatch(/^rlor_/)
    expect(await get('ratelimits.getOverride', { namespaceId, identifier })).toEqual({
      status: 200,
      body: { id: first.body.overrideId, identifier, limit: 10, duration: 6_500, async: true },
    })
    const again = await set({ namespaceName: name, identifier, limit: 7, duration: 50_000 })
    expect(again.body.overrideId).toBe(first.body.overrideId)
    expect((await get('ratelimits.getOverride', { namespaceName: name, identifier })).body).toEqual({
      id: first.body.overrideId,
      identifier,
      limit: 7,
      duration: 50_000,
      async: false,
    })
  })

  it('setOverride: 404 for a namespace id that names none, 400 for a short identifier or no namespace', async () => {
    const missing = 'rlns_1CX8vvRBk5mZqT3vYwXpLs'
    expect(await set({ namespaceId: missing, identifier: randomUUID(), limit: 10, duration: 6_500 })).toMatchObject({
      status: 404,
      body: { error: { code: 'NOT_FOUND', message: `Namespace ${missing} not found` } },
    })
    const short = await set({ namespaceId, identifier: '', limit: 10, duration: 6_500 })
    expect(short.status).toBe(400)
    expect(short.body.error.message).toMatch(/^identifier/)
    for (const body of [{}, { namespaceId: '' }, { namespaceName: '' }]) {
      expect(await set({ ...body, identifier: 'abc', limit: 1, duration: 1_000 })).toMatchObject({
        status: 400,
        body: { error: { code: 'BAD_REQUEST', message: 'You must provide a namespaceId or a namespaceName' } },
      })
    }
    for (const bad of [{ limit: -1 }, { duration: 999 }, { limit: 1.5 }]) {
      expect((await set({ namespaceId, identifier: 'abc', limit: 1, duration: 1_000, ...bad })).status).toBe(400)
    }
  })

  it('setOverride by a name not used yet makes the namespace (with ratelimit.*.create_namespace), else 404', async () => {
    const fresh = `ns-${randomUUID()}`
    const override = { namespaceName: fresh, identifier: 'user_1', limit: 1, duration: 1_000 }
    const setOnly = await rootKeyWith(stack.backend, ['ratelimit.*.set_override'])
    expect(await set(override, setOnly)).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    expect(await namespaceOf(stack.backend, fresh)).toBeNull()
    const setAndCreate = await rootKeyWith(stack.backend, ['ratelimit.*.set_override', 'ratelimit.*.create_namespace'])
    expect((await set(override, setAndCreate)).status).toBe(200)
    expect(await namespaceOf(stack.backend, fresh)).toMatchObject({ name: fresh })
  })

  it('getOverride: 400 without a namespace (an empty one counts as none), 404 for no override or no namespace', async () => {
    const identifier = randomUUID()
    expect(await get('ratelimits.getOverride', { namespaceId: '', identifier })).toMatchObject({
      status: 400,
      body: { error: { code: 'BAD_REQUEST', message: 'You must provide a namespaceId or a namespaceName' } },
    })
    expect(await get('ratelimits.getOverride', { namespaceId, identifier })).toMatchObject({
      status: 404,
      body: { error: { message: 'Override not found' } },
    })
    expect((await get('ratelimits.getOverride', { namespaceName: `ns-${randomUUID()}`, identifier })).status).toBe(404)
  })

  it('lists a namespace’s overrides a page at a time, with the total; unknown parameters are ignored', async () => {
    const name2 = `ns-${randomUUID()}`
    const empty = await get('ratelimits.listOverrides', { namespaceName: name2 })
    expect(empty.status).toBe(404)
    const identifiers = ['a-1', 'b-*', 'c-3']
    for (const identifier of identifiers) await set({ namespaceName: name2, identifier, limit: 2, duration: 120_000 })
    const all = await get('ratelimits.listOverrides', { namespaceName: name2, identifier: randomUUID() })
    expect(all.status).toBe(200)
    expect(all.body.total).toBe(3)
    expect(all.body.cursor).toBeUndefined()
    expect(all.body.overrides.map((o: { identifier: string }) => o.identifier)).toEqual(identifiers)
    expect(all.body.overrides[1]).toEqual({
      id: expect.stringMatching(/^rlor_/),
      identifier: 'b-*',
      limit: 2,
      duration: 120_000,
      async: false,
    })
    const seen: string[] = []
    let cursor: string | undefined
    do {
      const page = await get('ratelimits.listOverrides', {
        namespaceName: name2,
        limit: '2',
        ...(cursor ? { cursor } : {}),
      })
      expect(page.body.total).toBe(3)
      seen.push(...page.body.overrides.map((o: { identifier: string }) => o.identifier))
      cursor = page.body.cursor
    } while (cursor)
    expect(seen).toEqual(identifiers)
    expect(await get('ratelimits.listOverrides', {})).toMatchObject({
      status: 400,
      body: { error: { message: 'You must provide a namespaceId or a namespaceName' } },
    })
    const fresh = await get('ratelimits.listOverrides', { namespaceId })
    expect(fresh.status).toBe(200)
  })

  it('deletes an override: getOverride 404 and listOverrides without it; 404 for one that is not there', async () => {
    const identifier = randomUUID()
    await set({ namespaceId, identifier, limit: 1, duration: 60_000 })
    expect(await stack.post('ratelimits.deleteOverride', { namespaceId, identifier })).toEqual({
      status: 200,
      body: {},
    })
    expect((await get('ratelimits.getOverride', { namespaceId, identifier })).status).toBe(404)
    const listed = (await get('ratelimits.listOverrides', { namespaceId })).body.overrides
    expect(listed.map((o: { identifier: string }) => o.identifier)).not.toContain(identifier)
    expect(await stack.post('ratelimits.deleteOverride', { namespaceId, identifier })).toMatchObject({
      status: 404,
      body: { error: { message: `Override with ${identifier} identifier not found` } },
    })
    expect(await stack.post('ratelimits.deleteOverride', { identifier })).toMatchObject({
      status: 400,
      body: { error: { message: 'You must provide a namespaceId or a namespaceName' } },
    })
  })

  it('removes a deleted wildcard from its namespace, and keeps the others in the order first set', async () => {
    for (const identifier of ['p1-*', 'p2-*', 'p3-*']) await set({ namespaceId, identifier, limit: 5, duration: 1_000 })
    await set({ namespaceId, identifier: 'p1-*', limit: 6, duration: 1_000 })
    await stack.post('ratelimits.deleteOverride', { namespaceId, identifier: 'p2-*' })
    const { wildcards } = (await namespaceOf(stack.backend, name))!
    expect(wildcards.map((rule) => [rule.identifier, rule.limit])).toEqual([
      ['p1-*', 6],
      ['p3-*', 5],
    ])
  })

  it('needs ratelimit.<namespaceId|*>.<set_override|read_override|delete_override>, and nothing else will do', async () => {
    const identifier = randomUUID()
    await set({ namespaceId, identifier, limit: 1, duration: 60_000 })
    const calls = {
      set_override: (headers: Record<string, string>) =>
        set({ namespaceId, identifier, limit: 7, duration: 60_000 }, headers),
      read_override: (headers: Record<string, string>) =>
        get('ratelimits.getOverride', { namespaceId, identifier }, headers),
      list: (headers: Record<string, string>) => get('ratelimits.listOverrides', { namespaceId }, headers),
      delete_override: (headers: Record<string, string>) =>
        stack.post('ratelimits.deleteOverride', { namespaceId, identifier }, stack.controlPlane, headers),
    }
    for (const [call, send] of Object.entries(calls)) {
      const action = call === 'list' ? 'read_override' : call
      for (const refused of [
        [],
        ['ratelimit.*.limit'],
        ['ratelimit.*.create_namespace', 'ratelimit.*.read_namespace'],
        [`ratelimit.rlns_other.${action}`],
        [`api.*.*`, 'rbac.*.*', 'identity.*.*'],
        ...['set_override', 'read_override', 'delete_override']
          .filter((other) => other !== action)
          .map((other) => [`ratelimit.*.${other}`]),
      ]) {
        const answer = await send(await rootKeyWith(stack.backend, refused))
        expect({ status: answer.status, code: answer.body.error?.code }, `${call} as ${refused.join()}`).toEqual({
          status: 403,
          code: 'INSUFFICIENT_PERMISSIONS',
        })
      }
    }
    // The override is untouched by the refused calls.
    expect((await get('ratelimits.getOverride', { namespaceId, identifier })).body.limit).toBe(1)
    for (const [call, send] of Object.entries(calls)) {
      const action = call === 'list' ? 'read_override' : call
      for (const granted of [[`ratelimit.*.${action}`], [`ratelimit.${namespaceId}.${action}`], ['ratelimit.*.*']]) {
        if (call === 'delete_override') await set({ namespaceId, identifier, limit: 7, duration: 60_000 })
        expect((await send(await rootKeyWith(stack.backend, granted))).status, `${call} as ${granted.join()}`).toBe(200)
      }
    }
    expect((await get('ratelimits.getOverride', { namespaceId, identifier })).status).toBe(404)
  })

  it('a namespace that does not exist: 404 only for a root key that may act on every namespace, else 403', async () => {
    const fresh = `ns-${randomUUID()}`
    const readAll = await rootKeyWith(stack.backend, ['ratelimit.*.read_override'])
    const readOne = await rootKeyWith(stack.backend, [`ratelimit.${namespaceId}.read_override`])
    expect((await get('ratelimits.getOverride', { namespaceName: fresh, identifier: 'abc' }, readAll)).status).toBe(404)
    expect((await get('ratelimits.getOverride', { namespaceName: fresh, identifier: 'abc' }, readOne)).status).toBe(403)
  })

  it('refuses more than 256 wildcard overrides in a namespace with 412, and changing one that is there still works', async () => {
    const crowded = `ns-${randomUUID()}`
    for (let i = 0; i < 256; i++) {
      expect((await set({ namespaceName: crowded, identifier: `w${i}-*`, limit: 1, duration: 1_000 })).status).toBe(200)
    }
    expect(
      await set({ namespaceName: crowded, identifier: 'one-too-many-*', limit: 1, duration: 1_000 }),
    ).toMatchObject({
      status: 412,
      body: { error: { code: 'PRECONDITION_FAILED' } },
    })
    expect((await get('ratelimits.getOverride', { namespaceName: crowded, identifier: 'one-too-many-*' })).status).toBe(
      404,
    )
    expect((await set({ namespaceName: crowded, identifier: 'w0-*', limit: 2, duration: 1_000 })).status).toBe(200)
    expect(
      (await set({ namespaceName: crowded, identifier: 'exact-ones-are-not-counted', limit: 2, duration: 1_000 }))
        .status,
    ).toBe(200)
  })
})
