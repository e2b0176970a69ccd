import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'

/**
 * v2's keys.add|remove|set{Permissions,Roles}, through Unkey's SDK (its zod schemas check each answer), organised as
 * Unkey's Go tests of the routes are (200, 400, 401, 403, 404); each change is verified on a separate verifier.
 */
onBothStores('v2 keys permissions and roles', {}, (stack) => {
  const sdk = () => unkeySdk(stack.controlPlane, TEST_ROOT_KEY)
  const v2 = async (operation: string, payload: object, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'POST', url: `/v2/${operation}`, headers, payload })
    return { status: response.statusCode, body: response.json() }
  }
  const rootKey = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return key
  }
  const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' })
  const unique = (name: string) => `${name}.${randomUUID().slice(0, 8)}`
  const newPermission = async (name = unique('perm'), description?: string) => {
    const { body } = await stack.post('permissions.createPermission', { name, ...(description ? { description } : {}) })
    return { id: body.permissionId as string, slug: name }
  }
  const newRole = async (permissions: string[] = [], name = unique('role')) => {
    const { body } = await stack.post('permissions.createRole', { name, permissions })
    return { id: body.roleId as string, name }
  }
  let apiId: string
  const newKey = async (fields: object = {}) => {
    const { body } = await stack.post('keys.createKey', { apiId, ...fields })
    return { keyId: body.keyId as string, key: body.key as string }
  }
  /** The verifier's answer once `check` accepts it (at once on memory, within ms on Redis). */
  const verifiedAs = (key: string, permissions: string, valid: boolean) =>
    waitFor(
      async () => (await stack.verify({ key, authorization: { permissions } })).valid === valid,
      `${permissions} to verify ${valid}`,
      2_000,
      2,
    )
  beforeAll(async () => {
    apiId = (await stack.post('apis.createApi', { name: 'v2 grants' })).body.apiId
  })

  describe('200', () => {
    it('addPermissions takes slugs and ids, makes a missing slug, and answers every direct permission', async () => {
      const held = await newPermission()
      const bySlug = await newPermission(unique('docs'), 'Reads documents')
      const byId = await newPermission()
      const missing = unique('made')
      const { keyId, key } = await newKey({ permissions: [held.slug] })
      const { data } = await sdk().keys.addPermissions({ keyId, permissions: [bySlug.slug, byId.id, missing] })
      const made = await stack.backend.store.entities.readName('permission', missing)
      expect(made).toMatch(/^perm_/)
      expect(data).toHaveLength(4)
      expect(data).toEqual(
        expect.arrayContaining([
          { id: held.id, name: held.slug, slug: held.slug },
          { id: bySlug.id, name: bySlug.slug, slug: bySlug.slug, description: 'Reads documents' },
          { id: byId.id, name: byId.slug, slug: byId.slug },
          { id: made, name: missing, slug: missing },
        ]),
      )
      await verifiedAs(key, missing, true)
      // Idempotent: adding them again changes nothing.
      const again = await sdk().keys.addPermissions({ keyId, permissions: [bySlug.slug, missing] })
      expect(again.data).toEqual(data)
      expect((await stack.getKey(keyId)).permissions.sort()).toEqual(data.map((p) => p.slug).sort())
    })

    it('removePermissions takes slugs and ids and answers what the key still holds', async () => {
      const [a, b, c] = [await newPermission(), await newPermission(), await newPermission()]
      const { keyId, key } = await newKey({ permissions: [a.slug, b.slug, c.slug] })
      await verifiedAs(key, a.slug, true)
      const { data } = await sdk().keys.removePermissions({ keyId, permissions: [a.slug, b.id] })
      expect(data).toEqual([{ id: c.id, name: c.slug, slug: c.slug }])
      await verifiedAs(key, a.slug, false)
      expect(await stack.verify({ key, authorization: { permissions: c.slug } })).toMatchObject({ valid: true })
      // One the key does not hold (but which exists): nothing changes.
      expect((await sdk().keys.removePermissions({ keyId, permissions: [a.slug] })).data).toEqual(data)
      expect((await sdk().keys.removePermissions({ keyId, permissions: [c.slug] })).data).toEqual([])
    })

    it('setPermissions replaces the direct permissions, making missing slugs; [] takes them all away', async () => {
      const [a, b] = [await newPermission(), await newPermission()]
      const missing = unique('set')
      const { keyId, key } = await newKey({ permissions: [a.slug] })
      const { data } = await sdk().keys.setPermissions({ keyId, permissions: [b.id, missing] })
      expect(data.map((p) => p.slug).sort()).toEqual([b.slug, missing].sort())
      await verifiedAs(key, a.slug, false)
      await verifiedAs(key, missing, true)
      expect((await sdk().keys.setPermissions({ keyId, permissions: [] })).data).toEqual([])
      expect((await stack.getKey(keyId)).permissions).toBeUndefined()
    })

    it("addRoles answers every role the key holds, with the permissions each grants; roles' permissions verify", async () => {
      const p = await newPermission()
      const held = await newRole()
      const granting = await newRole([p.slug])
      const { keyId, key } = await newKey({ roles: [held.name] })
      const { data } = await sdk().keys.addRoles({ keyId, roles: [granting.name] })
      expect(data).toHaveLength(2)
      expect(data).toEqual(
        expect.arrayContaining([
          { id: held.id, name: held.name },
          { id: granting.id, name: granting.name, permissions: [{ id: p.id, name: p.slug, slug: p.slug }] },
        ]),
      )
      await verifiedAs(key, p.slug, true)
      expect((await sdk().keys.addRoles({ keyId, roles: [granting.id] })).data).toEqual(data)
    })

    it('removeRoles and setRoles take names and ids; setRoles with [] takes every role away', async () => {
      const p = await newPermission()
      const [a, b, c] = [await newRole([p.slug]), await newRole(), await newRole()]
      const { keyId, key } = await newKey({ roles: [a.name, b.name] })
      await verifiedAs(key, p.slug, true)
      expect((await sdk().keys.removeRoles({ keyId, roles: [a.id] })).data).toEqual([{ id: b.id, name: b.name }])
      await verifiedAs(key, p.slug, false)
      const set = await sdk().keys.setRoles({ keyId, roles: [c.name, a.name] })
      expect(set.data.map((role) => role.id).sort()).toEqual([a.id, c.id].sort())
      await verifiedAs(key, p.slug, true)
      expect((await sdk().keys.setRoles({ keyId, roles: [] })).data).toEqual([])
      expect((await stack.getKey(keyId)).roles).toBeUndefined()
    })

    it('a deleted permission is not answered, though the key still references it', async () => {
      const [a, b] = [await newPermission(), await newPermission()]
      const { keyId } = await newKey({ permissions: [a.slug] })
      await stack.post('permissions.deletePermission', { permissionId: a.id })
      expect((await sdk().keys.addPermissions({ keyId, permissions: [b.slug] })).data).toEqual([
        { id: b.id, name: b.slug, slug: b.slug },
      ])
    })

    it('records each change in the audit log as v1 does', async () => {
      const a = await newPermission()
      const { keyId } = await newKey()
      await sdk().keys.addPermissions({ keyId, permissions: [a.slug] })
      const audit = await stack.controlPlane.app.inject({
        method: 'GET',
        url: '/v1/audit.list',
        headers: ADMIN_HEADERS,
      })
      expect(audit.json().entries[0]).toMatchObject({
        action: 'keys.addPermissions',
        keyId,
        apiId,
        after: { permissionIds: [a.id] },
      })
    })
  })

  describe('400', () => {
    it.each([
      ['keys.addPermissions', { permissions: ['a'] }, 'body.keyId'],
      ['keys.addPermissions', { keyId: 'key_x', permissions: [] }, 'body.permissions'],
      ['keys.removeRoles', { keyId: 'key_x', roles: [] }, 'body.roles'],
      ['keys.setPermissions', { keyId: 'key_x', permissions: ['has space'] }, 'body.permissions.0'],
      ['keys.setRoles', { keyId: 'key_x', roles: [{ name: 'v1 shape' }] }, 'body.roles.0'],
      ['keys.addRoles', { keyId: 'key_x', roles: ['a'], extra: 1 }, 'body.extra'],
    ])('%s %j: 400 locating %s', async (operation, payload, location) => {
      const { status, body } = await v2(operation, payload)
      expect(status).toBe(400)
      expect(body.error.errors).toContainEqual(expect.objectContaining({ location }))
    })

    it('a key holds at most 100 permissions; the slugs of a refused call are not made', async () => {
      const { keyId } = await newKey()
      const many = Array.from({ length: 101 }, (_, i) => `many.${i}.${randomUUID().slice(0, 8)}`)
      const made = async (slugs: string[]) =>
        (await Promise.all(slugs.map((slug) => stack.backend.store.entities.readName('permission', slug)))).filter(
          Boolean,
        )
      const { status, body } = await v2('keys.setPermissions', { keyId, permissions: many })
      expect(status).toBe(400)
      expect(body.error.errors).toEqual([{ location: 'body.permissions', message: 'a key holds at most 100' }])
      expect((await stack.getKey(keyId)).permissions).toBeUndefined()
      expect(await made(many)).toEqual([])
      // Adding: what the key holds counts, and a slug named twice is made once.
      expect((await v2('keys.setPermissions', { keyId, permissions: many.slice(0, 99) })).status).toBe(200)
      const two = [unique('over'), unique('over')]
      const added = await v2('keys.addPermissions', { keyId, permissions: [...two, two[0]!] })
      expect(added.status).toBe(400)
      expect(await made(two)).toEqual([])
      expect((await v2('keys.addPermissions', { keyId, permissions: [two[0]!, two[0]!] })).status).toBe(200)
    })
  })

  describe('401', () => {
    it('an unknown root key', async () => {
      await expect(
        unkeySdk(stack.controlPlane, 'not-a-root-key').keys.addRoles({ keyId: 'key_x', roles: ['a'] }),
      ).rejects.toMatchObject({ name: 'UnauthorizedErrorResponse' })
    })
  })

  describe('403', () => {
    it.each([
      ['addPermissions', 'permissions', ['rbac.*.add_permission_to_key']],
      ['addPermissions', 'permissions', ['api.*.update_key']],
      ['removePermissions', 'permissions', ['api.*.update_key', 'rbac.*.add_permission_to_key']],
      ['setPermissions', 'permissions', ['api.*.update_key', 'rbac.*.add_permission_to_key']],
      ['setPermissions', 'permissions', ['api.*.update_key', 'rbac.*.remove_permission_from_key']],
      ['addRoles', 'roles', ['api.*.update_key', 'rbac.*.remove_role_from_key']],
      ['removeRoles', 'roles', ['api.*.read_key', 'rbac.*.remove_role_from_key']],
      ['setRoles', 'roles', ['api.*.create_key', 'rbac.*.*']],
    ] as const)('%s %s with %j: 403, nothing changes', async (operation, field, permissions) => {
      const held = field === 'permissions' ? (await newPermission()).slug : (await newRole()).name
      const other = field === 'permissions' ? (await newPermission()).slug : (await newRole()).name
      const { keyId } = await newKey({ [field]: [held] })
      const sdkOf = unkeySdk(stack.controlPlane, await rootKey([...permissions]))
      const call =
        field === 'permissions'
          ? sdkOf.keys[operation as 'addPermissions']({ keyId, permissions: [other] })
          : sdkOf.keys[operation as 'addRoles']({ keyId, roles: [other] })
      await expect(call).rejects.toMatchObject({ name: 'ForbiddenErrorResponse', data$: { error: { status: 403 } } })
      expect((await stack.getKey(keyId))[field]).toEqual([held])
    })

    it('update_key on the key’s own api is enough, on another api it is not', async () => {
      const p = await newPermission()
      const { keyId } = await newKey()
      const rbac = ['rbac.*.add_permission_to_key']
      const elsewhere = unkeySdk(stack.controlPlane, await rootKey(['api.api_other.update_key', ...rbac]))
      await expect(elsewhere.keys.addPermissions({ keyId, permissions: [p.slug] })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
      })
      const own = unkeySdk(stack.controlPlane, await rootKey([`api.${apiId}.update_key`, ...rbac]))
      expect((await own.keys.addPermissions({ keyId, permissions: [p.slug] })).data).toHaveLength(1)
    })

    it('a missing permission is made only with rbac.*.create_permission', async () => {
      const { keyId } = await newKey()
      const missing = unique('not.made')
      const limited = await rootKey(['api.*.update_key', 'rbac.*.add_permission_to_key'])
      const { status, body } = await v2('keys.addPermissions', { keyId, permissions: [missing] }, headersOf(limited))
      expect(status).toBe(403)
      expect(body.error.detail).toContain('rbac.*.create_permission')
      expect(await stack.backend.store.entities.readName('permission', missing)).toBeNull()
    })

    it('a root key that may make permissions but not change the key makes none', async () => {
      const { keyId } = await newKey()
      const missing = unique('not.made')
      const rbacOnly = await rootKey([
        'api.api_other.update_key',
        'rbac.*.add_permission_to_key',
        'rbac.*.create_permission',
      ])
      for (const operation of ['keys.addPermissions', 'keys.setPermissions']) {
        const { status } = await v2(operation, { keyId, permissions: [missing] }, headersOf(rbacOnly))
        expect(status).toBe(403)
      }
      expect(await stack.backend.store.entities.readName('permission', missing)).toBeNull()
    })

    it("setRoles and removeRoles need only update_key (Unkey v2's rule), addRoles also add_role_to_key", async () => {
      const [a, b] = [await newRole(), await newRole()]
      const { keyId } = await newKey({ roles: [a.name] })
      const updateOnly = unkeySdk(stack.controlPlane, await rootKey(['api.*.update_key']))
      expect((await updateOnly.keys.setRoles({ keyId, roles: [b.name] })).data).toEqual([{ id: b.id, name: b.name }])
      expect((await updateOnly.keys.removeRoles({ keyId, roles: [b.name] })).data).toEqual([])
      await expect(updateOnly.keys.addRoles({ keyId, roles: [a.name] })).rejects.toMatchObject({
        name: 'ForbiddenErrorResponse',
      })
    })
  })

  describe('404', () => {
    it.each(['addPermissions', 'removePermissions', 'setPermissions'] as const)(
      '%s on a key that does not exist',
      async (operation) => {
        await expect(sdk().keys[operation]({ keyId: 'key_missing', permissions: ['a'] })).rejects.toMatchObject({
          name: 'NotFoundErrorResponse',
          data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' } },
        })
      },
    )

    it.each(['addRoles', 'removeRoles', 'setRoles'] as const)(
      '%s on a missing key, or naming a missing role',
      async (operation) => {
        await expect(sdk().keys[operation]({ keyId: 'key_missing', roles: ['a'] })).rejects.toMatchObject({
          name: 'NotFoundErrorResponse',
          data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/key_not_found' } },
        })
        const held = await newRole()
        const { keyId } = await newKey({ roles: [held.name] })
        await expect(sdk().keys[operation]({ keyId, roles: [held.name, unique('nobody')] })).rejects.toMatchObject({
          name: 'NotFoundErrorResponse',
          data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/role_not_found' } },
        })
        expect((await stack.getKey(keyId)).roles).toEqual([held.name])
      },
    )

    it('removePermissions naming a permission that does not exist (v1 skips it)', async () => {
      const held = await newPermission()
      const { keyId } = await newKey({ permissions: [held.slug] })
      await expect(
        sdk().keys.removePermissions({ keyId, permissions: [held.slug, unique('nothing')] }),
      ).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/permission_not_found' } },
      })
      expect((await stack.getKey(keyId)).permissions).toEqual([held.slug])
    })
  })
})
