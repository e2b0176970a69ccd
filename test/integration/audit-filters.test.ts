import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listAuditEntries, MAX_SCANNED } from '../../control-plane/audit/list.js'
import { MemoryChangeFeed } from '../../shared/feed/memory-change-feed.js'
import { createMemoryStore } from '../../shared/store/memory-store.js'
import { openBackend, startTestControlPlane, TEST_ROOT_KEY, type Backend, type TestServer } from '../support/apps.js'
import { useRedisServer } from '../support/redis-server.js'

/** audit.list narrowed by action, root key, api and key (the console's audit page and a key's own entries). */
const redis = useRedisServer()

for (const store of ['memory', 'redis'] as const) {
  describe(`audit.list filters on the ${store} store`, () => {
    let backend: Backend
    let server: TestServer
    const admin = { authorization: `Bearer ${TEST_ROOT_KEY}` }

    beforeAll(async () => {
      backend = await openBackend(store === 'redis' ? redis.url : undefined)
      server = await startTestControlPlane({ backend })
    })
    afterAll(async () => {
      await server.close()
      await backend.close()
    })

    const post = async (path: string, payload: object, headers = admin) =>
      (
        await server.app.inject({
          method: 'POST',
          url: `/v1/${path}`,
          headers: { ...headers, 'content-type': 'application/json' },
          payload,
        })
      ).json()
    const list = async (query: string) => {
      const answer = await server.app.inject({ method: 'GET', url: `/v1/audit.list?${query}`, headers: admin })
      expect(answer.statusCode, answer.body).toBe(200)
      return answer.json<{ entries: { action: string; keyId?: string; apiId?: string }[]; cursor?: string }>()
    }

    it('keeps the entries that match every filter given, newest first, paged on the cursor', async () => {
      const { apiId } = await post('apis.createApi', { name: 'filtered' })
      const other = (await post('apis.createApi', { name: 'other' })).apiId
      const { keyId } = await post('keys.createKey', { apiId, name: 'one' })
      const second = (await post('keys.createKey', { apiId, name: 'two' })).keyId
      await post('keys.createKey', { apiId: other, name: 'elsewhere' })
      await post('keys.updateKey', { keyId, enabled: false })
      await post('keys.updateKey', { keyId, enabled: true })
      await post('keys.deleteKey', { keyId: second })

      const ofKey = await list(`keyId=${keyId}`)
      expect(ofKey.entries.map((entry) => entry.action)).toEqual(['keys.updateKey', 'keys.updateKey', 'keys.createKey'])
      expect(ofKey.cursor).toBeUndefined()
      const created = await list(`action=keys.createKey&apiId=${apiId}`)
      expect(created.entries.map((entry) => entry.keyId)).toEqual([second, keyId])
      expect((await list(`apiId=${apiId}`)).entries.map((entry) => entry.action)).toEqual([
        'keys.deleteKey',
        'keys.updateKey',
        'keys.updateKey',
        'keys.createKey',
        'keys.createKey',
        'apis.createApi',
      ])

      // A page at a time: a full page carries the cursor of its last entry, the next goes on from there.
      const first = await list(`apiId=${apiId}&limit=4`)
      expect(first.entries).toHaveLength(4)
      const rest = await list(`apiId=${apiId}&limit=4&cursor=${first.cursor}`)
      expect(rest.entries.map((entry) => entry.action)).toEqual(['keys.createKey', 'apis.createApi'])
      expect(rest.cursor).toBeUndefined()
    })

    it('filters by the root key that made the write', async () => {
      const { key, rootKeyId } = await post('rootKeys.createRootKey', { permissions: ['api.*.create_api'] })
      const { apiId } = await post(
        'apis.createApi',
        { name: 'by another root key' },
        { authorization: `Bearer ${key}` },
      )
      const byIt = await list(`rootKeyId=${rootKeyId}`)
      expect(byIt.entries).toEqual([expect.objectContaining({ action: 'apis.createApi', apiId, rootKeyId })])
      expect((await list(`rootKeyId=root_bootstrap&apiId=${apiId}`)).entries).toEqual([])
    })
  })
}

describe('a filtered audit.list', () => {
  it(`reads at most ${MAX_SCANNED} entries a call: fewer matches and a cursor to go on from, then the rest`, async () => {
    const store = createMemoryStore(new MemoryChangeFeed())
    await store.audit.appendAudit({ at: 1, rootKeyId: 'root_a', action: 'apis.createApi', apiId: 'api_old' })
    for (let i = 0; i < MAX_SCANNED + 500; i++)
      await store.audit.appendAudit({ at: 2 + i, rootKeyId: 'root_b', action: 'x' })
    const first = await listAuditEntries(store.audit, { apiId: 'api_old' }, { limit: 10 })
    expect(first.entries).toEqual([])
    expect(first.cursor).toBeDefined()
    const second = await listAuditEntries(store.audit, { apiId: 'api_old' }, { limit: 10, cursor: first.cursor })
    expect(second.entries).toEqual([expect.objectContaining({ apiId: 'api_old', rootKeyId: 'root_a' })])
    expect(second.cursor).toBeUndefined()
  })
})
