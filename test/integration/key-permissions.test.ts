import { beforeAll, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey, hashKey } from '../../shared/keys/key-material.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { waitFor } from '../support/wait-for.js'

onBothStores('permissions and roles', {}, (stack) => {
  let apiId: string
  beforeAll(async () => {
    apiId = (await post('apis.createApi', { name: 'perms' })).body.apiId
  })
  const { post } = stack
  const verify = async (key: string, permissions?: unknown) =>
    stack.verify(permissions === undefined ? { key } : { key, authorization: { permissions } })
  /** Waits until the separate verifier's answer reflects a change (immediate on memory, ms on Redis). */
  const eventually = (check: () => Promise<boolean>) => waitFor(check, 'the change to reach the verifier', 2_000, 2)

  it('creates the permissions and roles createKey names, and shows them sorted and unique on getKey and verifyKey', async () => {
    const { body } = await post('keys.createKey', {
      apiId,
      permissions: ['docs.write', 'docs.read', 'docs.read'],
      roles: ['editor'],
    })
    expect(body.keyId).toMatch(/^key_/)
    const read = await stack.controlPlane.app.inject({
      method: 'GET',
      url: `/v1/keys.getKey?keyId=${body.keyId}`,
      headers: ADMIN_HEADERS,
    })
    expect(read.json()).toMatchObject({ permissions: ['docs.read', 'docs.write'], roles: ['editor'] })
    expect(await verify(body.key)).toMatchObject({
      valid: true,
      permissions: ['docs.read', 'docs.write'],
      roles: ['editor'],
    })
  })

  it("stores a new key's grants as sorted ids, whatever the order of the names: createKey and the imports", async () => {
    const tag = newId('perm').slice(-8)
    const permissions: { id: string; name: string }[] = []
    const roles: { id: string; name: string }[] = []
    for (let i = 0; i < 4; i++) {
      const name = `sorted.${tag}.${i}`
      permissions.push({ id: (await post('permissions.createPermission', { name })).body.permissionId, name })
      roles.push({ id: (await post('permissions.createRole', { name })).body.roleId, name })
    }
    // The names from the newest record to the oldest: ids in the order named would not be sorted.
    const newestFirst = (records: { id: string; name: string }[]) =>
      [...records].sort((a, b) => b.id.localeCompare(a.id)).map((record) => record.name)
    const names = { permissions: newestFirst(permissions), roles: newestFirst(roles) }
    const v2 = async (operation: string, payload: object) =>
      (
        await stack.controlPlane.app.inject({
          method: 'POST',
          url: `/v2/${operation}`,
          headers: ADMIN_HEADERS,
          payload,
        })
      ).json()
    const hash = () => hashKey(newId('key'))
    const keyIds = [
      (await post('keys.createKey', { apiId, ...names })).body.keyId,
      (await v2('keys.createKey', { apiId, ...names })).data.keyId,
      (await post('migrations.createKeys', [{ apiId, plaintext: newId('key'), ...names }])).body.keyIds[0],
      (await v2('keys.migrateKeys', { migrationId: 'sorted', apiId, keys: [{ hash: hash(), ...names }] })).data
        .migrated[0].keyId,
    ]
    const sorted = (records: { id: string }[]) => records.map((record) => record.id).sort()
    for (const keyId of keyIds) {
      const record = await stack.backend.store.keys.getKeyById(keyId)
      expect({ keyId, permissionIds: record?.permissionIds, roleIds: record?.roleIds }).toEqual({
        keyId,
        permissionIds: sorted(permissions),
        roleIds: sorted(roles),
      })
    }
  })

  it('evaluates permission queries: a name, and, or, nested', async () => {
    const { body } = await post('keys.createKey', { apiId, permissions: ['a', 'b'] })
    const cases: [unknown, boolean][] = [
      ['a', true],
      ['c', false],
      [{ and: ['a', 'b'] }, true],
      [{ and: ['a', 'c'] }, false],
      [{ or: ['c', 'b'] }, true],
      [{ or: ['c', 'd'] }, false],
      [{ and: ['a', { or: ['c', { and: ['b'] }] }] }, true],
      [{ or: [{ and: ['a', 'c'] }, 'd'] }, false],
    ]
    for (const [query, valid] of cases) {
      expect(await verify(body.key, query), JSON.stringify(query)).toMatchObject({
        valid,
        code: valid ? 'VALID' : 'INSUFFICIENT_PERMISSIONS',
        keyId: body.keyId,
      })
    }
  })

  it('refuses malformed and oversized queries with 400', async () => {
    const { body } = await post('keys.createKey', { apiId })
    let deep: unknown = 'a'
    for (let i = 0; i < 9; i++) deep = { and: [deep] }
    for (const query of [
      { xor: ['a'] },
      { and: [] },
      { and: 'a' },
      7,
      'has space',
      deep,
      { or: Array.from({ length: 101 }, (_, i) => `p${i}`) },
    ]) {
      const response = await post(
        'keys.verifyKey',
        { key: body.key, authorization: { permissions: query } },
        stack.verifier,
        { 'content-type': 'application/json' },
      )
      expect(response.status, JSON.stringify(query).slice(0, 60)).toBe(400)
      expect(response.body.error.message).toMatch(/^authorization\.permissions: /)
    }
  })

  it('adds, sets and removes permissions and roles by name or id, and every verifier follows', async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    expect((await verify(key.key, 'docs.read')).valid).toBe(false)

    const added = await post('keys.addPermissions', {
      keyId: key.keyId,
      permissions: [
        { name: 'docs.read', create: true },
        { slug: 'docs.write', create: true },
      ],
    })
    expect(added.status).toBe(200)
    expect(added.body.map((p: { name: string }) => p.name)).toEqual(['docs.read', 'docs.write'])
    const [read, write] = added.body as { id: string; name: string }[]
    expect(read!.id).toMatch(/^perm_/)
    await eventually(async () => (await verify(key.key, { and: ['docs.read', 'docs.write'] })).valid === true)

    // By id, as Unkey's clients name them too.
    expect(await post('keys.removePermissions', { keyId: key.keyId, permissions: [{ id: write!.id }] })).toMatchObject({
      status: 200,
      body: {},
    })
    await eventually(async () => (await verify(key.key, 'docs.write')).code === 'INSUFFICIENT_PERMISSIONS')
    expect((await verify(key.key, 'docs.read')).valid).toBe(true)

    const set = await post('keys.setPermissions', { keyId: key.keyId, permissions: [{ name: 'admin', create: true }] })
    expect(set.body).toEqual([{ id: expect.stringMatching(/^perm_/), name: 'admin' }])
    await eventually(async () => (await verify(key.key, 'admin')).valid === true)
    expect((await verify(key.key, 'docs.read')).valid).toBe(false)

    const roles = await post('keys.addRoles', {
      keyId: key.keyId,
      roles: [
        { name: 'owner', create: true },
        { name: 'billing', create: true },
      ],
    })
    expect(roles.body.map((r: { name: string }) => r.name)).toEqual(['owner', 'billing'])
    await post('keys.removeRoles', { keyId: key.keyId, roles: [{ name: 'owner' }] })
    await eventually(async () => JSON.stringify((await verify(key.key)).roles) === '["billing"]')
    expect((await post('keys.setRoles', { keyId: key.keyId, roles: [{ name: 'owner' }] })).body).toEqual([
      { id: expect.stringMatching(/^role_/), name: 'owner' },
    ])
    await eventually(async () => JSON.stringify((await verify(key.key)).roles) === '["owner"]')

    // updateKey takes names (created when missing, as createKey does) and Unkey's references; [] clears.
    await post('keys.updateKey', { keyId: key.keyId, permissions: ['x.y', { name: 'admin' }], roles: [] })
    await eventually(async () => (await verify(key.key, { and: ['x.y', 'admin'] })).valid === true)
    expect((await verify(key.key)).roles).toBeUndefined()
    await post('keys.updateKey', { keyId: key.keyId, permissions: [] })
    const cleared = await stack.getKey(key.keyId)
    expect(cleared).not.toHaveProperty('permissions')
    expect(cleared).not.toHaveProperty('roles')
  })

  it('answers 404 for a permission or role that does not exist unless asked to create it, and 400 for []', async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    const missing = await post('keys.addPermissions', { keyId: key.keyId, permissions: [{ name: 'nowhere.perm' }] })
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    expect(missing.body.error.message).toContain('nowhere.perm')
    expect((await post('keys.addRoles', { keyId: key.keyId, roles: [{ id: 'role_missing' }] })).status).toBe(404)
    expect((await post('keys.setRoles', { keyId: key.keyId, roles: [{ name: 'no-such-role' }] })).status).toBe(404)
    // Unkey's: an empty list is a mistake, not "clear them all" (updateKey's [] clears).
    for (const path of ['keys.setPermissions', 'keys.addPermissions', 'keys.removePermissions']) {
      expect((await post(path, { keyId: key.keyId, permissions: [] })).status, path).toBe(400)
    }
    for (const path of ['keys.setRoles', 'keys.addRoles', 'keys.removeRoles']) {
      expect((await post(path, { keyId: key.keyId, roles: [] })).status, path).toBe(400)
    }
    expect((await post('keys.addPermissions', { keyId: key.keyId, permissions: [{}] })).status).toBe(400)
    expect((await getKeyFields(key.keyId)).permissions).toBeUndefined()
  })

  async function getKeyFields(keyId: string) {
    return stack.getKey(keyId)
  }

  it('grants a role’s permissions to its keys, and follows every change to the role or its permissions', async () => {
    const permissionId = (await post('permissions.createPermission', { name: 'reports.read' })).body.permissionId
    const roleId = (
      await post('permissions.createRole', { name: `analyst-${stack.store}`, permissions: [{ id: permissionId }] })
    ).body.roleId
    // The key holds the permission only through the role.
    const { body: key } = await post('keys.createKey', { apiId, roles: [`analyst-${stack.store}`] })
    expect(await verify(key.key, 'reports.read')).toMatchObject({
      valid: true,
      permissions: ['reports.read'],
      roles: [`analyst-${stack.store}`],
    })
    expect(await stack.getKey(key.keyId)).toMatchObject({ permissions: ['reports.read'] })

    // The role loses the permission: one write, and the key follows.
    expect((await post('permissions.setRolePermissions', { roleId, permissions: [] })).body).toEqual([])
    await eventually(async () => (await verify(key.key, 'reports.read')).code === 'INSUFFICIENT_PERMISSIONS')
    await post('permissions.setRolePermissions', { roleId, permissions: ['reports.read'] })
    await eventually(async () => (await verify(key.key, 'reports.read')).valid === true)

    // Deleting the permission: no role grants it any more, and re-creating the slug is another permission.
    expect((await post('permissions.deletePermission', { permissionId })).status).toBe(200)
    await eventually(async () => (await verify(key.key, 'reports.read')).code === 'INSUFFICIENT_PERMISSIONS')
    await post('permissions.createPermission', { name: 'reports.read' })
    expect((await verify(key.key, 'reports.read')).code).toBe('INSUFFICIENT_PERMISSIONS')

    // Deleting the role: the key holds nothing through it.
    const again = (await post('permissions.createPermission', { name: 'reports.write' })).body.permissionId
    await post('permissions.setRolePermissions', { roleId, permissions: [{ id: again }] })
    await eventually(async () => (await verify(key.key, 'reports.write')).valid === true)
    expect((await post('permissions.deleteRole', { roleId })).status).toBe(200)
    await eventually(async () => (await verify(key.key, 'reports.write')).code === 'INSUFFICIENT_PERMISSIONS')
    expect((await verify(key.key)).roles).toBeUndefined()
  })

  it("needs Unkey's rbac permissions and update_key on the key's api, and validates names and counts", async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    const headersOf = async (permissions: string[]) => {
      const { key: rootKey, hash } = generateRootKey()
      await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
      return { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' }
    }
    const onApi = (...permissions: string[]) => headersOf([`api.${apiId}.update_key`, ...permissions])
    const reader = await headersOf([`api.${apiId}.read_key`])
    const add = { keyId: key.keyId, permissions: [{ name: 'p.one', create: true }] }
    expect((await post('keys.addPermissions', add, stack.controlPlane, reader)).status).toBe(403)
    // Rbac rights alone, with no right on the key's api: refused (Unkey v1 let it through), and the refusal does not
    // name the api, which such a root key may not know of.
    const rbacOnly = await headersOf(['rbac.*.add_permission_to_key', 'rbac.*.create_permission'])
    const elsewhere = await post('keys.addPermissions', add, stack.controlPlane, rbacOnly)
    expect(elsewhere).toMatchObject({ status: 403, body: { error: { code: 'INSUFFICIENT_PERMISSIONS' } } })
    expect(elsewhere.body.error.message).toBe("the root key needs api.<the key's api>.update_key")
    expect(JSON.stringify(elsewhere.body)).not.toContain(apiId)
    for (const operation of ['setPermissions', 'removePermissions', 'addRoles', 'setRoles', 'removeRoles']) {
      const field = operation.endsWith('Roles') ? 'roles' : 'permissions'
      const everyRbac = await headersOf(['rbac.*.*'])
      const answer = await post(
        `keys.${operation}`,
        { keyId: key.keyId, [field]: [{ name: 'p.one' }] },
        stack.controlPlane,
        everyRbac,
      )
      expect(answer.status, operation).toBe(403)
    }
    expect((await stack.getKey(key.keyId)).permissions).toBeUndefined()
    // Adding needs add_permission_to_key, and creating the missing one create_permission too (Unkey's).
    const adder = await onApi('rbac.*.add_permission_to_key')
    const refused = await post('keys.addPermissions', add, stack.controlPlane, adder)
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'INSUFFICIENT_PERMISSIONS' } } })
    expect(refused.body.error.message).toContain('rbac.*.create_permission')
    const creator = await onApi('rbac.*.add_permission_to_key', 'rbac.*.create_permission')
    expect((await post('keys.addPermissions', add, stack.controlPlane, creator)).status).toBe(200)
    // Setting what it holds already takes nothing away; setting something else does, and needs the remove action.
    expect(
      (
        await post(
          'keys.setPermissions',
          { keyId: key.keyId, permissions: [{ name: 'p.one' }] },
          stack.controlPlane,
          adder,
        )
      ).status,
    ).toBe(200)
    const replace = { keyId: key.keyId, permissions: [{ name: 'p.other', create: true }] }
    expect((await post('keys.setPermissions', replace, stack.controlPlane, creator)).status).toBe(403)
    // Removing needs its own action; removing one the workspace does not have removes nothing (Unkey: 200).
    const remove = { keyId: key.keyId, permissions: [{ name: 'p.one' }] }
    expect((await post('keys.removePermissions', remove, stack.controlPlane, creator)).status).toBe(403)
    const nothing = { keyId: key.keyId, permissions: [{ name: 'never.made' }] }
    expect((await post('keys.removePermissions', nothing)).status).toBe(200)
    expect((await post('keys.removeRoles', { keyId: key.keyId, roles: [{ name: 'never-made' }] })).status).toBe(200)
    // api.<apiId>.update_key alone is not enough: the rbac action is needed too.
    const updater = await headersOf([`api.${apiId}.update_key`])
    expect((await post('keys.removePermissions', remove, stack.controlPlane, updater)).status).toBe(403)
    const remover = await onApi('rbac.*.remove_permission_from_key')
    expect((await post('keys.removePermissions', remove, stack.controlPlane, remover)).status).toBe(200)
    // updateKey's permissions need them too, beside update_key.
    const patch = { keyId: key.keyId, permissions: ['p.one'] }
    expect((await post('keys.updateKey', patch, stack.controlPlane, updater)).status).toBe(403)
    const both = await headersOf([`api.${apiId}.update_key`, 'rbac.*.add_permission_to_key'])
    expect((await post('keys.updateKey', patch, stack.controlPlane, both)).status).toBe(200)
    // Roles and permissions records need their rbac actions.
    for (const [path, body] of [
      ['permissions.createPermission', { name: 'p.two' }],
      ['permissions.createRole', { name: 'r.two' }],
      ['permissions.deleteRole', { roleId: 'role_x' }],
      ['permissions.deletePermission', { permissionId: 'perm_x' }],
    ] as const) {
      expect((await post(path, body, stack.controlPlane, reader)).status, path).toBe(403)
    }

    expect((await post('keys.addPermissions', { keyId: 'key_missing', permissions: [{ name: 'p' }] })).status).toBe(404)
    expect((await post('keys.addPermissions', { keyId: key.keyId, permissions: [{ name: 'bad name' }] })).status).toBe(
      400,
    )
    expect(
      (await post('keys.createKey', { apiId, permissions: Array.from({ length: 101 }, (_, i) => `p${i}`) })).status,
    ).toBe(400)
    await post('keys.setPermissions', {
      keyId: key.keyId,
      permissions: Array.from({ length: 100 }, (_, i) => ({ name: `p${i}`, create: true })),
    })
    const over = await post('keys.addPermissions', {
      keyId: key.keyId,
      permissions: [{ name: 'one-more', create: true }],
    })
    expect(over).toMatchObject({ status: 400, body: { error: { message: 'permissions: a key holds at most 100' } } })
  })
})
