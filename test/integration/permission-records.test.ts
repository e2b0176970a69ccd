import { expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'

/** permissions.* on both stores, organised as Unkey's tests are: happy paths, errors, security. */
onBothStores('permission and role records', {}, (stack) => {
  const { post } = stack
  const get = async (path: string, headers: Record<string, string> = ADMIN_HEADERS) => {
    const response = await stack.controlPlane.app.inject({ method: 'GET', url: `/v1/${path}`, headers })
    return { status: response.statusCode, body: response.json() }
  }
  const unique = () => Math.random().toString(36).slice(2, 10)
  const rootKeyWith = async (permissions: string[]) => {
    const { key, hash } = generateRootKey()
    await stack.backend.store.rootKeys.createRootKey({ id: newId('root'), hash, permissions, createdAt: Date.now() })
    return { authorization: `Bearer ${key}`, 'content-type': 'application/json' }
  }

  it('creates, reads, lists and deletes a permission; its slug is its name unless given', async () => {
    const name = `invoices.read.${unique()}`
    const created = await post('permissions.createPermission', { name, description: 'read invoices' })
    expect(created.status).toBe(200)
    expect(created.body.permissionId).toMatch(/^perm_/)
    const { permissionId } = created.body
    expect(await get(`permissions.getPermission?permissionId=${permissionId}`)).toEqual({
      status: 200,
      body: { id: permissionId, name, slug: name, description: 'read invoices' },
    })
    const slugged = await post('permissions.createPermission', {
      name: 'Can read reports',
      slug: `reports.${unique()}`,
    })
    expect(slugged.status).toBe(200)
    const listed = await get('permissions.listPermissions')
    expect(listed.body.map((p: { id: string }) => p.id)).toEqual(
      expect.arrayContaining([permissionId, slugged.body.permissionId]),
    )
    expect((await post('permissions.deletePermission', { permissionId })).status).toBe(200)
    expect((await get(`permissions.getPermission?permissionId=${permissionId}`)).status).toBe(404)
    expect((await get('permissions.listPermissions')).body.map((p: { id: string }) => p.id)).not.toContain(permissionId)
    // Its slug is free again.
    expect((await post('permissions.createPermission', { name })).status).toBe(200)
  })

  it('creates, reads, lists and deletes a role with the permissions it grants', async () => {
    const permission = await post('permissions.createPermission', { name: `a.${unique()}` })
    const name = `role-${unique()}`
    const created = await post('permissions.createRole', {
      name,
      description: 'does a',
      permissions: [{ id: permission.body.permissionId }],
    })
    expect(created.status).toBe(200)
    const { roleId } = created.body
    expect(roleId).toMatch(/^role_/)
    const read = await get(`permissions.getRole?roleId=${roleId}`)
    expect(read.body).toMatchObject({ id: roleId, name, description: 'does a' })
    expect(read.body.permissions).toEqual([{ id: permission.body.permissionId, name: expect.stringMatching(/^a\./) }])
    expect((await get('permissions.listRoles')).body.map((r: { id: string }) => r.id)).toContain(roleId)
    expect((await get('permissions.listRoles?limit=1')).body).toHaveLength(1)
    expect((await post('permissions.deleteRole', { roleId })).status).toBe(200)
    expect((await get(`permissions.getRole?roleId=${roleId}`)).status).toBe(404)
  })

  it('refuses short names, duplicates, unknown ids and slugs keys could not be granted by', async () => {
    for (const name of ['', 'ab']) {
      const answer = await post('permissions.createPermission', { name })
      expect(answer.status, JSON.stringify(name)).toBe(400)
      expect(answer.body.error.code).toBe('BAD_REQUEST')
      expect((await post('permissions.createRole', { name })).status).toBe(400)
    }
    const name = `dup.${unique()}`
    expect((await post('permissions.createPermission', { name })).status).toBe(200)
    const again = await post('permissions.createPermission', { name })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatchObject({ code: 'CONFLICT' })
    expect(again.body.error.message).toContain(`"${name}" already exists`)
    const role = `dup-${unique()}`
    expect((await post('permissions.createRole', { name: role })).status).toBe(200)
    expect((await post('permissions.createRole', { name: role })).status).toBe(409)
    // A name with a space is fine, but then it needs a slug: the slug is what keys hold and queries name.
    const spaced = await post('permissions.createPermission', { name: 'Can write records' })
    expect(spaced.status).toBe(400)
    expect(spaced.body.error.message).toMatch(/^name: .*give a slug/)
    for (const path of ['permissions.getPermission?permissionId=perm_nope', 'permissions.getRole?roleId=role_nope'])
      expect((await get(path)).status, path).toBe(404)
    expect((await post('permissions.deletePermission', { permissionId: 'perm_nope' })).status).toBe(404)
    expect((await post('permissions.deleteRole', { roleId: 'role_nope' })).status).toBe(404)
    expect((await post('permissions.setRolePermissions', { roleId: 'role_nope', permissions: [] })).status).toBe(404)
    const roleId = (await post('permissions.createRole', { name: `r-${unique()}` })).body.roleId
    const unknown = await post('permissions.setRolePermissions', { roleId, permissions: [{ id: 'perm_nope' }] })
    expect(unknown).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    expect((await post('permissions.createPermission', { name: 'abc', extra: 1 })).status).toBe(400)
  })

  it('answers each call only for the rbac action it needs', async () => {
    const permissionId = (await post('permissions.createPermission', { name: `s.${unique()}` })).body.permissionId
    const roleId = (await post('permissions.createRole', { name: `s-${unique()}` })).body.roleId
    const as = (headers: Record<string, string>) =>
      [
        [
          'createPermission',
          async () =>
            (await post('permissions.createPermission', { name: `c.${unique()}` }, stack.controlPlane, headers)).status,
          'rbac.*.create_permission',
        ],
        [
          'getPermission',
          async () => (await get(`permissions.getPermission?permissionId=${permissionId}`, headers)).status,
          'rbac.*.read_permission',
        ],
        [
          'listPermissions',
          async () => (await get('permissions.listPermissions', headers)).status,
          'rbac.*.read_permission',
        ],
        [
          'createRole',
          async () =>
            (await post('permissions.createRole', { name: `c-${unique()}` }, stack.controlPlane, headers)).status,
          'rbac.*.create_role',
        ],
        [
          'getRole',
          async () => (await get(`permissions.getRole?roleId=${roleId}`, headers)).status,
          'rbac.*.read_role',
        ],
        ['listRoles', async () => (await get('permissions.listRoles', headers)).status, 'rbac.*.read_role'],
      ] as [string, () => Promise<number>, string][]
    const none = await rootKeyWith(['api.*.*'])
    for (const [what, call] of as(none)) expect(await call(), `${what} with api.*.*`).toBe(403)
    for (const [what, , needs] of as(none)) {
      const headers = await rootKeyWith([needs])
      const [, call] = as(headers).find(([name]) => name === what)!
      expect(await call(), `${what} with ${needs}`).toBe(200)
    }
    const wildcard = await rootKeyWith(['rbac.*.*'])
    for (const [what, call] of as(wildcard)) expect(await call(), `${what} with rbac.*.*`).toBe(200)
    const unauthenticated = { 'content-type': 'application/json' }
    const refused = await post(
      'permissions.createPermission',
      { name: `u.${unique()}` },
      stack.controlPlane,
      unauthenticated,
    )
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'UNAUTHORIZED' } } })
  })
  it('a v1 call refused for a later name makes none of the names before it (same answer, nothing left behind)', async () => {
    const apiId = (await post('apis.createApi', { name: 'refused names' })).body.apiId
    const [first, second] = [`made.${unique()}`, `made.${unique()}`]
    const creator = await rootKeyWith(['api.*.create_key', 'rbac.*.create_permission'])
    const refused = await post(
      'keys.createKey',
      { apiId, permissions: [first], roles: [`r-${unique()}`] },
      stack.controlPlane,
      creator,
    )
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'INSUFFICIENT_PERMISSIONS' } } })
    const { keyId } = (await post('keys.createKey', { apiId })).body
    const missing = await post('keys.addPermissions', {
      keyId,
      permissions: [{ name: second, create: true }, { id: 'perm_missing' }],
    })
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } })
    for (const slug of [first, second])
      expect(await stack.backend.store.entities.readName('permission', slug)).toBeNull()
  })
})
