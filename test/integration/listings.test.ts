import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'

/**
 * apis.listApis and ratelimits.listNamespaces (Keygate's own, for the console): every record, oldest first, a page at
 * a time on the cursor, for a root key that may read them all; deleted apis gone. On both stores.
 */
const redis = useRedisServer()

for (const store of ['memory', 'redis'] as const) {
  describe(`listings on the ${store} store`, () => {
    let backend: Backend
    let server: TestServer

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      server = await startTestControlPlane({ backend })
    })
    afterAll(async () => {
      await server.close()
      await backend.close()
    })

    const auth = (rootKey = TEST_ROOT_KEY) => ({ authorization: `Bearer ${rootKey}` })
    const post = async (path: string, payload: object) => {
      const answer = await server.app.inject({
        method: 'POST',
        url: `/v1/${path}`,
        headers: { ...auth(), 'content-type': 'application/json' },
        payload,
      })
      expect(answer.statusCode, answer.body).toBe(200)
      return answer.json()
    }
    const get = async (path: string, rootKey?: string) => {
      const answer = await server.app.inject({ method: 'GET', url: `/v1/${path}`, headers: auth(rootKey) })
      return { status: answer.statusCode, body: answer.json() }
    }
    const rootKeyWith = async (permissions: string[]) =>
      ((await post('rootKeys.createRootKey', { permissions })) as { key: string }).key
    /** Every page of a listing, following its cursor. */
    const allPages = async (path: string, field: string, limit: number, rootKey?: string) => {
      const pages: { id: string; name: string }[][] = []
      const seen = new Set<string>()
      let cursor = ''
      do {
        const { status, body } = await get(`${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, rootKey)
        expect(status).toBe(200)
        pages.push(body[field])
        cursor = body.cursor ?? ''
        // A listing that ignores its cursor hands back the same cursor again: fail here rather than loop forever.
        expect(seen.has(cursor), `${path} repeated cursor ${cursor}`).toBe(false)
        seen.add(cursor)
      } while (cursor)
      return pages
    }

    it('apis.listApis: every api, oldest first, in pages on the cursor; a deleted api is gone', async () => {
      const before = (await allPages('apis.listApis', 'apis', 100)).flat().map((api) => api.id)
      const made: string[] = []
      for (const name of ['one', 'two', 'three', 'four', 'five'])
        made.push((await post('apis.createApi', { name })).apiId)
      await post('apis.deleteApi', { apiId: made[1] })
      const pages = await allPages('apis.listApis', 'apis', 2)
      const listed = pages.flat().filter((api) => !before.includes(api.id))
      expect(listed.map((api) => api.name)).toEqual(['one', 'three', 'four', 'five'])
      expect(listed[0]).toEqual({ id: made[0], name: 'one', createdAt: expect.any(Number) })
      // No empty last page: a cursor comes back only when another api follows.
      expect(pages.every((page) => page.length > 0)).toBe(true)
    })

    it('apis.listApis needs api.*.read_api: a root key scoped to some apis is refused, as listIdentities', async () => {
      const mine = (await post('apis.createApi', { name: 'mine' })).apiId
      const everyApi = await rootKeyWith(['api.*.read_api'])
      expect((await allPages('apis.listApis', 'apis', 100, everyApi)).flat().map((api) => api.id)).toContain(mine)
      const scoped = await rootKeyWith([`api.${mine}.read_api`, `api.${mine}.read_key`])
      expect(await get('apis.listApis', scoped)).toMatchObject({
        status: 403,
        body: { error: { code: 'INSUFFICIENT_PERMISSIONS', message: 'the root key needs api.*.read_api' } },
      })
    })

    it('apis.listApis and ratelimits.listNamespaces take a limit of 1–100 only, as the other listings', async () => {
      for (const path of ['apis.listApis', 'ratelimits.listNamespaces']) {
        for (const limit of ['1', '100']) expect((await get(`${path}?limit=${limit}`)).status, limit).toBe(200)
        for (const limit of ['0', '101', '1000000000000', '-1', '1.5', 'x'])
          expect(await get(`${path}?limit=${limit}`), `${path} ${limit}`).toMatchObject({
            status: 400,
            body: { error: { code: 'BAD_REQUEST', message: expect.stringContaining('limit') } },
          })
      }
    })

    it('ratelimits.listNamespaces: every namespace made by first use, once, oldest first; ratelimit.*.read_namespace', async () => {
      const suffix = `${store}-${Date.now()}`
      const names = [`a-${suffix}`, `b-${suffix}`, `c-${suffix}`]
      for (const name of names) {
        await post('ratelimits.setOverride', { namespaceName: name, identifier: 'user_1', limit: 5, duration: 60_000 })
        // A second use finds the namespace: still one record.
        await post('ratelimits.setOverride', { namespaceName: name, identifier: 'user_2', limit: 5, duration: 60_000 })
      }
      const listed = (await allPages('ratelimits.listNamespaces', 'namespaces', 2)).flat()
      const ours = listed.filter((namespace) => namespace.name.endsWith(suffix))
      expect(ours.map((namespace) => namespace.name)).toEqual(names)
      expect(ours[0]).toEqual({ id: expect.stringMatching(/^rlns_/), name: names[0], createdAt: expect.any(Number) })
      const reader = await rootKeyWith(['ratelimit.*.read_namespace'])
      expect((await allPages('ratelimits.listNamespaces', 'namespaces', 100, reader)).flat()).toEqual(listed)
      const scoped = await rootKeyWith([`ratelimit.${ours[1]!.id}.read_namespace`])
      expect(await get('ratelimits.listNamespaces', scoped)).toMatchObject({
        status: 403,
        body: { error: { code: 'INSUFFICIENT_PERMISSIONS' } },
      })
    })
  })
}
