import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hashKey } from '../../shared/keys/key-material.js'
import { MANAGE_ROOT_KEYS } from '../../shared/root-keys/root-key-actions.js'
import type { Store } from '../../shared/store/store.js'
import {
  ManualClock,
  openBackend,
  startTestControlPlane,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { waitFor } from '../support/wait-for.js'
import { useRedisServer } from '../support/redis-server.js'

/**
 * The root-key lifecycle through the API (rootKeys.*), on both stores, with two control planes on one store: what
 * one revokes the other refuses at its next call. Who may call each route is route-security.test.ts's part.
 */
const redis = useRedisServer()

interface Answer {
  status: number
  body: any
  headers: Record<string, unknown>
}

for (const storeKind of ['memory', 'redis'] as const) {
  describe(`root keys on the ${storeKind} store`, () => {
    const clock = new ManualClock()
    let backend: Backend
    let store: Store
    /** Two control planes on one store (on Redis, each with its own connection), as replicas behind a Service. */
    let first: TestServer
    let second: TestServer

    beforeAll(async () => {
      backend = await openBackend(storeKind === 'redis' ? redis.url : undefined)
      store = backend.store
      first = await startTestControlPlane({ backend, clock })
      second = await startTestControlPlane(storeKind === 'redis' ? { redisUrl: redis.url, clock } : { backend, clock })
    })
    afterAll(async () => {
      await second?.close()
      await first?.close()
      await backend?.close()
    })

    async function call(
      server: TestServer,
      rootKey: string,
      method: 'GET' | 'POST',
      path: string,
      payload?: object,
    ): Promise<Answer> {
      const response = await server.app.inject({
        method,
        url: `/v1/${path}`,
        headers: { authorization: `Bearer ${rootKey}` },
        ...(payload === undefined ? {} : { payload }),
      })
      return { status: response.statusCode, body: response.json(), headers: response.headers }
    }
    const admin = (method: 'GET' | 'POST', path: string, payload?: object) =>
      call(first, TEST_ROOT_KEY, method, path, payload)

    async function createRootKey(permissions: string[], name?: string, as = TEST_ROOT_KEY) {
      const made = await call(first, as, 'POST', 'rootKeys.createRootKey', { name, permissions })
      expect(made.status, JSON.stringify(made.body)).toBe(200)
      return made.body as { rootKeyId: string; key: string }
    }
    const listed = async () => (await admin('GET', 'rootKeys.listRootKeys')).body.rootKeys as any[]
    /** What a management call answers a caller whose root key is not (or no longer) valid. */
    const refusal = (answer: Answer) => ({
      status: answer.status,
      error: answer.body.error.code,
      message: answer.body.error.message,
      challenge: answer.headers['www-authenticate'],
    })
    const unknownKeyAnswer = async (server: TestServer) =>
      refusal(await call(server, 'kgroot_NotARootKeyAtAll0000000000', 'GET', 'rootKeys.listRootKeys'))

    it('creates a root key that works at once, listed by id, name, start and permissions, never by key or hash', async () => {
      const { rootKeyId, key } = await createRootKey(['api.*.create_api', 'api.*.read_api'], 'ci deploys')
      expect(rootKeyId).toMatch(/^root_/)
      expect(key).toMatch(/^kgroot_/)
      expect((await call(second, key, 'POST', 'apis.createApi', { name: 'made by ci' })).status).toBe(200)
      const row = (await listed()).find((rootKey) => rootKey.id === rootKeyId)
      expect(row).toEqual({
        id: rootKeyId,
        name: 'ci deploys',
        start: key.slice(0, 'kgroot_'.length + 4),
        permissions: ['api.*.create_api', 'api.*.read_api'],
        createdAt: clock.now(),
        lastUsedAt: clock.now(),
      })
      const text = JSON.stringify(await admin('GET', 'rootKeys.listRootKeys'))
      expect(text).not.toContain(key)
      expect(text).not.toContain(hashKey(key))
    })

    it('lists the actions when a permission is malformed, and the one probably meant (issue 13)', async () => {
      const made = await admin('POST', 'rootKeys.createRootKey', {
        permissions: ['api.*.read_key', 'api.*.create_keys'],
      })
      expect(made.status).toBe(400)
      expect(made.body.error.message).toBe(
        `permissions.1: "api.*.create_keys" is not '*' or <resource>.<id|*>.<action> (resources: api, rbac, identity, ratelimit, webhook, portal) or rootkey.*.manage: "create_keys" is not an action of api (did you mean create_key?); actions of api: create_api, read_api, update_api, delete_api, create_key, read_key, update_key, delete_key, verify_key, read_analytics, encrypt_key, decrypt_key, report_leak or *`,
      )
    })

    it('revokes a root key: both control planes refuse it at its next call, with the answer an unknown key gets', async () => {
      const { rootKeyId, key } = await createRootKey(['*'], 'leaked')
      expect((await call(first, key, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
      expect((await call(second, key, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
      expect((await admin('POST', 'rootKeys.revokeRootKey', { rootKeyId })).status).toBe(200)
      for (const server of [first, second]) {
        const answer = await call(server, key, 'POST', 'apis.createApi', { name: 'too late' })
        expect(refusal(answer)).toEqual(await unknownKeyAnswer(server))
        expect({ status: answer.status, code: answer.body.error.code }).toEqual({ status: 403, code: 'UNAUTHORIZED' })
      }
      expect((await listed()).map((rootKey) => rootKey.id)).not.toContain(rootKeyId)
      const again = await admin('POST', 'rootKeys.revokeRootKey', { rootKeyId })
      expect({ status: again.status, code: again.body.error.code }).toEqual({ status: 404, code: 'NOT_FOUND' })
    })

    it('lets any root key revoke itself, without rootkey.*.manage', async () => {
      const { rootKeyId, key } = await createRootKey(['api.*.read_key'])
      expect((await call(first, key, 'POST', 'rootKeys.revokeRootKey', { rootKeyId })).status).toBe(200)
      expect((await call(second, key, 'GET', 'apis.getApi?apiId=api_x')).body.error.code).toBe('UNAUTHORIZED')
    })

    it('refuses privilege escalation: a root key creates, revokes and rolls only root keys it holds every permission of', async () => {
      const { key: manager } = await createRootKey([MANAGE_ROOT_KEYS, 'api.api_a.read_key'])
      const { rootKeyId: adminId, key: adminKey } = await createRootKey(['*'])
      for (const permissions of [['*'], ['api.*.read_key'], ['api.api_b.read_key'], ['api.api_a.*']]) {
        const answer = await call(first, manager, 'POST', 'rootKeys.createRootKey', { permissions })
        expect({ permissions, status: answer.status }).toEqual({ permissions, status: 403 })
        expect(answer.body.error.message).toContain(permissions[0])
      }
      for (const path of ['rootKeys.revokeRootKey', 'rootKeys.rollRootKey'])
        expect((await call(first, manager, 'POST', path, { rootKeyId: adminId })).status).toBe(403)
      expect((await call(first, adminKey, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
      // What it holds, it may hand on.
      const { key: narrower } = await createRootKey(['api.api_a.read_key', MANAGE_ROOT_KEYS], undefined, manager)
      expect((await call(first, narrower, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
    })

    it('rolls a root key: a new one with the same name and permissions, the old one refused at once', async () => {
      const { rootKeyId, key } = await createRootKey([MANAGE_ROOT_KEYS, 'api.*.read_key'], 'rotating')
      clock.advance(1_000)
      // It may roll itself (it holds its own permissions): the answer carries its successor.
      const rolled = await call(first, key, 'POST', 'rootKeys.rollRootKey', { rootKeyId })
      expect(rolled.status, JSON.stringify(rolled.body)).toBe(200)
      expect(rolled.body.rootKeyId).not.toBe(rootKeyId)
      expect(rolled.body.key).not.toBe(key)
      expect((await call(second, key, 'GET', 'rootKeys.listRootKeys')).body.error.code).toBe('UNAUTHORIZED')
      expect((await call(second, rolled.body.key, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
      const rows = await listed()
      expect(rows.map((row) => row.id)).not.toContain(rootKeyId)
      expect(rows.find((row) => row.id === rolled.body.rootKeyId)).toMatchObject({
        name: 'rotating',
        permissions: [MANAGE_ROOT_KEYS, 'api.*.read_key'].sort(),
        createdAt: clock.now(),
      })
      const bootstrap = await admin('POST', 'rootKeys.rollRootKey', { rootKeyId: 'root_bootstrap' })
      expect(bootstrap.status).toBe(404)
      expect(bootstrap.body.error.message).toContain('keygate root-key bootstrap disable')
    })

    it('audits every change under the root key that made it, naming the root key changed, never a key or hash', async () => {
      const { rootKeyId, key } = await createRootKey(['api.*.read_key'], 'audited')
      const rolled = (await admin('POST', 'rootKeys.rollRootKey', { rootKeyId })).body
      await admin('POST', 'rootKeys.revokeRootKey', { rootKeyId: rolled.rootKeyId })
      const entries = (await admin('GET', 'audit.list?limit=3')).body.entries
      expect(entries).toMatchObject([
        {
          action: 'rootKeys.revokeRootKey',
          rootKeyId: 'root_bootstrap',
          keyId: rolled.rootKeyId,
          before: { id: rolled.rootKeyId, name: 'audited', permissions: ['api.*.read_key'] },
          requestId: expect.stringMatching(/^req_/),
        },
        {
          action: 'rootKeys.rollRootKey',
          keyId: rootKeyId,
          before: { id: rootKeyId },
          after: { id: rolled.rootKeyId, name: 'audited' },
        },
        { action: 'rootKeys.createRootKey', keyId: rootKeyId, after: { id: rootKeyId, start: key.slice(0, 11) } },
      ])
      const text = JSON.stringify(entries)
      for (const secret of [key, rolled.key, hashKey(key), hashKey(rolled.key)]) expect(text).not.toContain(secret)
    })

    it('refuses the bootstrap root key on every control plane while the store says it is off, as an unknown key', async () => {
      const { key: stored } = await createRootKey(['*'])
      await store.rootKeys.setBootstrapRootKeyDisabled(true)
      try {
        for (const server of [first, second]) {
          const answer = await call(server, TEST_ROOT_KEY, 'GET', 'rootKeys.listRootKeys')
          expect(refusal(answer)).toEqual(await unknownKeyAnswer(server))
          expect((await call(server, stored, 'GET', 'rootKeys.listRootKeys')).status).toBe(200)
        }
      } finally {
        await store.rootKeys.setBootstrapRootKeyDisabled(false)
      }
      expect((await admin('GET', 'rootKeys.listRootKeys')).status).toBe(200)
    })

    it('pages the list by cursor, oldest first', async () => {
      for (let i = 0; i < 3; i++) {
        clock.advance(1)
        await createRootKey(['api.*.read_key'], `page ${i}`)
      }
      const all = await listed()
      const pages: string[] = []
      let cursor: string | undefined
      do {
        const page = await admin('GET', `rootKeys.listRootKeys?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        pages.push(...page.body.rootKeys.map((row: { id: string }) => row.id))
        cursor = page.body.cursor
      } while (cursor)
      expect(pages).toEqual(all.map((row) => row.id))
      expect(pages).toEqual([...pages].sort())
    })

    it("records a root key's last use at most once a minute, not on every call", async () => {
      const { rootKeyId, key } = await createRootKey(['api.*.read_key'])
      const touches = countTouches(new Set([first.backend.store, second.backend.store]))
      const lastUse = async () => (await store.rootKeys.getRootKeyById(rootKeyId))?.lastUsedAt
      try {
        const start = clock.now()
        for (let i = 0; i < 5; i++) await call(first, key, 'GET', 'apis.getApi?apiId=api_x')
        await waitForTouches(touches, 1)
        expect(await lastUse()).toBe(start)
        clock.advance(59_000)
        for (let i = 0; i < 5; i++) await call(first, key, 'GET', 'apis.getApi?apiId=api_x')
        // The other control plane reads the stored last use: it does not write either.
        await call(second, key, 'GET', 'apis.getApi?apiId=api_x')
        expect(touches.count).toBe(1)
        expect(await lastUse()).toBe(start)
        clock.advance(1_000)
        await call(second, key, 'GET', 'apis.getApi?apiId=api_x')
        await waitForTouches(touches, 2)
        expect(await lastUse()).toBe(start + 60_000)
      } finally {
        touches.restore()
      }
    })
  })
}

/** Counts the touchRootKey calls of the control planes' stores (one object on memory, one each on Redis). */
function countTouches(stores: Set<Store>) {
  const counter = { count: 0, restore: () => {} }
  for (const store of stores) {
    const original = store.rootKeys.touchRootKey.bind(store.rootKeys)
    store.rootKeys.touchRootKey = async (hash, atMs) => {
      counter.count++
      await original(hash, atMs)
    }
    const restorePrevious = counter.restore
    counter.restore = () => {
      store.rootKeys.touchRootKey = original
      restorePrevious()
    }
  }
  return counter
}

async function waitForTouches(counter: { count: number }, count: number) {
  await waitFor(() => counter.count >= count, `${count} touches`, 1_000, 5).catch(() => {})
  expect(counter.count).toBe(count)
}
