import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'

const redis = useRedisServer()

for (const store of ['memory', 'redis'] as const) {
  describe(`audit log on the ${store} store`, () => {
    let backend: Backend
    let controlPlane: TestServer
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}`, 'content-type': 'application/json' }

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      controlPlane = await startTestControlPlane({ backend })
    })
    afterAll(async () => {
      await controlPlane.close()
      await backend.close()
    })

    const post = async (path: string, payload: object) =>
      (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
    const list = async (query = '', auth = headers) => {
      const response = await controlPlane.app.inject({ method: 'GET', url: `/v1/audit.list${query}`, headers: auth })
      return { status: response.statusCode, body: response.json() }
    }

    it('records who did what and when, with the record before and after, newest first, never a key or hash', async () => {
      const { apiId } = await post('apis.createApi', { name: 'audited' })
      const { keyId, key } = await post('keys.createKey', { apiId, name: 'first' })
      await post('keys.updateKey', { keyId, enabled: false })
      await post('keys.addPermissions', { keyId, permissions: [{ name: 'p', create: true }] })
      await post('keys.deleteKey', { keyId })

      const { status, body } = await list('?limit=6')
      expect(status).toBe(200)
      expect(body.entries.map((e: { action: string }) => e.action)).toEqual([
        'keys.deleteKey',
        'keys.addPermissions',
        // The permission `create: true` made on the way has an entry of its own, by the same root key.
        'permissions.createPermission',
        'keys.updateKey',
        'keys.createKey',
        'apis.createApi',
      ])
      expect(body.entries[2]).toMatchObject({ rootKeyId: 'root_bootstrap', after: { name: 'p', slug: 'p' } })
      for (const entry of body.entries.filter((e: { action: string }) => !e.action.startsWith('permissions.')))
        expect(entry).toMatchObject({
          rootKeyId: 'root_bootstrap',
          at: expect.any(Number),
          requestId: expect.stringMatching(/^req_/),
          apiId,
        })
      const update = body.entries[3]
      expect(update).toMatchObject({
        keyId,
        before: { id: keyId, name: 'first', enabled: true },
        after: { id: keyId, enabled: false },
      })
      const text = JSON.stringify(body)
      expect(text).not.toContain(key)
      expect(text).not.toContain(hashKey(key))
    })

    it('pages with a cursor and is for root keys with * only', async () => {
      for (let i = 0; i < 3; i++) await post('apis.createApi', { name: `page-${i}` })
      const all = (await list('?limit=6')).body.entries.map((e: { id: string }) => e.id)
      const first = await list('?limit=2')
      expect(first.body.entries.map((e: { id: string }) => e.id)).toEqual(all.slice(0, 2))
      expect(first.body.cursor).toBe(all[1])
      const second = await list(`?limit=2&cursor=${first.body.cursor}`)
      expect(second.body.entries.map((e: { id: string }) => e.id)).toEqual(all.slice(2, 4))
      for (const bad of ['abc', '99999999999999999999999-0', '1-'])
        expect((await list(`?cursor=${bad}`)).status).toBe(400)
      const { key: narrow, hash } = generateRootKey()
      await backend.store.rootKeys.createRootKey({
        id: newId('root'),
        hash,
        permissions: ['api.*.read_key'],
        createdAt: Date.now(),
      })
      expect((await list('', { ...headers, authorization: `Bearer ${narrow}` })).status).toBe(403)
    })

    it('answers a cursor nothing is older than (0-0) with an empty page, and a malformed cursor with a coded 400', async () => {
      await post('apis.createApi', { name: 'before the first entry' })
      // Redis refuses XREVRANGE from '(0-0': this was a 500 on the redis store. Filtered calls read in chunks.
      for (const query of ['?cursor=0-0', '?cursor=000-00', '?cursor=0-0&limit=1', '?cursor=0-0&action=apis.createApi'])
        expect(await list(query), query).toEqual({ status: 200, body: { entries: [] } })
      expect((await list('?cursor=0-1')).body).toEqual({ entries: [] })
      for (const bad of ['(0-0', '0-0-0', '-0', '0', '0x1-0', ' 1-0', '1-0 ', '+', '-'])
        expect(await list(`?cursor=${encodeURIComponent(bad)}`), bad).toEqual({
          status: 400,
          body: {
            error: expect.objectContaining({
              code: 'BAD_REQUEST',
              message: expect.stringContaining('cursor'),
              requestId: expect.stringMatching(/^req_/),
            }),
          },
        })
    })
  })
}
