import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/keys/key-material.js'
import { TEST_ROOT_KEY } from '../support/apps.js'
import { ADMIN_HEADERS, onBothStores } from '../support/both-stores.js'
import { unkeySdk } from '../support/unkey-sdk.js'
import { waitFor } from '../support/wait-for.js'

/** v2's permissions.* (permissions and roles) through Unkey's SDK, organised happy / error / security. */
onBothStores('v2 permissions and roles', {}, (stack) => {
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
  const headersWith = async (permissions: string[]) => ({
    authorization: `Bearer ${await rootKeyWith(permissions)}`,
    'content-type': 'application/json',
  })
  /** A slug no other test uses. */
  const unique = (base: string) => `${base}.${randomUUID().slice(0, 8)}`
  const createPermission = async (slug = unique('perm'), description?: string) => {
    const made = await sdk().permissions.createPermission({ name: `Name of ${slug}`, slug, description })
    return { id: made.data.permissionId, slug }
  }

  describe('happy: permissions', () => {
    it('creates a permission and reads it by id and by slug', async () => {
      const slug = unique('documents.read')
      const { id } = await createPermission(slug, 'Reads documents')
      expect(id).toMatch(/^perm_/)
      const expected = { id, name: `Name of ${slug}`, slug, description: 'Reads documents' }
      expect((await sdk().permissions.getPermission({ permission: id })).data).toEqual(expected)
      expect((await sdk().permissions.getPermission({ permission: slug })).data).toEqual(expected)
      // No description: the field is left out, never null.
      const bare = await createPermission()
      expect((await post('permissions.getPermission', { permission: bare.id })).body.data).toEqual({
        id: bare.id,
        name: `Name of ${bare.slug}`,
        slug: bare.slug,
      })
    })

    it("pages through permissions with the SDK's pager, search matching slug, name or description", async () => {
      const tag = randomUUID().slice(0, 8)
      const made = [] as string[]
      for (let i = 0; i < 3; i++) made.push((await createPermission(`paged.${tag}.${i}`)).id)
      made.push((await createPermission(unique('described'), `About ${tag.toUpperCase()}`)).id)
      await createPermission()
      const pages = [] as { ids: string[]; cursor?: string; hasMore: boolean }[]
      for await (const page of await sdk().permissions.listPermissions({ limit: 2, search: tag })) {
        pages.push({ ids: page.result.data.map((p) => p.id), ...page.result.pagination })
      }
      expect(pages.map((page) => page.ids)).toEqual([made.slice(0, 2), made.slice(2)])
      expect(pages.map((page) => page.hasMore)).toEqual([true, false])
      expect(pages[1]!.cursor).toBeUndefined()
    })

    it('deletes a permission named by slug; roles granting it stop showing it', async () => {
      const { id, slug } = await createPermission()
      const role = await sdk().permissions.createRole({ name: unique('role'), permissions: [slug] })
      await sdk().permissions.deletePermission({ permission: slug })
      await expect(sdk().permissions.getPermission({ permission: id })).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/permission_not_found' } },
      })
      expect((await sdk().permissions.getRole({ role: role.data.roleId })).data.permissions).toEqual([])
    })
  })

  describe('happy: roles', () => {
    it('creates a role with permissions by slug, making the missing ones; reads it by id and by name', async () => {
      const existing = await createPermission(unique('b.existing'))
      const missing = unique('a.missing')
      const name = unique('editor')
      const created = await sdk().permissions.createRole({
        name,
        description: 'Edits',
        permissions: [existing.slug, missing, existing.slug],
      })
      const roleId = created.data.roleId
      expect(roleId).toMatch(/^role_/)
      const made = (await sdk().permissions.getPermission({ permission: missing })).data
      expect(made).toEqual({ id: expect.stringMatching(/^perm_/), name: missing, slug: missing })
      const expected = {
        id: roleId,
        name,
        description: 'Edits',
        // Full permissions, in slug order.
        permissions: [made, { id: existing.id, name: `Name of ${existing.slug}`, slug: existing.slug }],
      }
      expect((await sdk().permissions.getRole({ role: roleId })).data).toEqual(expected)
      expect((await sdk().permissions.getRole({ role: name })).data).toEqual(expected)
    })

    it('a role without permissions shows permissions [] and no description', async () => {
      const name = unique('empty')
      const roleId = (await sdk().permissions.createRole({ name })).data.roleId
      expect((await post('permissions.getRole', { role: roleId })).body.data).toEqual({
        id: roleId,
        name,
        permissions: [],
      })
    })

    it('sets a role’s permissions: replaced, repeated slugs once, missing ones made, [] clears', async () => {
      const keep = await createPermission(unique('keep'))
      const drop = await createPermission(unique('drop'))
      const roleId = (await sdk().permissions.createRole({ name: unique('set'), permissions: [keep.slug, drop.slug] }))
        .data.roleId
      const fresh = unique('fresh')
      const set = await sdk().permissions.setRolePermissions({ roleId, permissions: [keep.slug, fresh, fresh] })
      expect(set.data.map((p) => p.slug)).toEqual([fresh, keep.slug].sort())
      expect(set.data.find((p) => p.slug === keep.slug)).toEqual({
        id: keep.id,
        name: `Name of ${keep.slug}`,
        slug: keep.slug,
      })
      expect((await sdk().permissions.getRole({ role: roleId })).data.permissions).toEqual(set.data)
      // The same again changes nothing.
      expect((await sdk().permissions.setRolePermissions({ roleId, permissions: [fresh, keep.slug] })).data).toEqual(
        set.data,
      )
      expect((await sdk().permissions.setRolePermissions({ roleId, permissions: [] })).data).toEqual([])
      expect((await sdk().permissions.getRole({ role: roleId })).data.permissions).toEqual([])
    })

    it('a key holding a role is granted what v2 set on it, through the verifier', async () => {
      const api = (await sdk().apis.createApi({ name: 'v2 rbac' })).data.apiId
      const name = unique('reader')
      const slug = unique('docs.read')
      const roleId = (await sdk().permissions.createRole({ name })).data.roleId
      const { body } = await stack.post('keys.createKey', { apiId: api, roles: [name] })
      const verify = () => stack.verify({ key: body.key, authorization: { permissions: slug } })
      expect(await verify()).toMatchObject({ valid: false, code: 'INSUFFICIENT_PERMISSIONS' })
      await sdk().permissions.setRolePermissions({ roleId, permissions: [slug] })
      await waitFor(async () => (await verify()).valid === true, 'the role to grant the permission', 2_000, 2)
      await sdk().permissions.deleteRole({ role: name })
      await waitFor(async () => (await verify()).valid === false, 'the deleted role to grant nothing', 2_000, 2)
    })

    it("pages through roles with the SDK's pager, with their permissions", async () => {
      const tag = randomUUID().slice(0, 8)
      const slug = unique('listed')
      const made = [] as string[]
      for (let i = 0; i < 3; i++) {
        made.push((await sdk().permissions.createRole({ name: `paged-${tag}-${i}`, permissions: [slug] })).data.roleId)
      }
      const pages = [] as { ids: string[]; hasMore: boolean; cursor?: string }[]
      for await (const page of await sdk().permissions.listRoles({ limit: 1, search: `PAGED-${tag}` })) {
        expect(page.result.data[0]?.permissions).toEqual([{ id: expect.stringMatching(/^perm_/), name: slug, slug }])
        pages.push({ ids: page.result.data.map((role) => role.id), ...page.result.pagination })
      }
      expect(pages.map((page) => page.ids)).toEqual(made.map((id) => [id]))
      expect(pages.map((page) => page.hasMore)).toEqual([true, true, false])
      expect(pages[2]!.cursor).toBeUndefined()
    })

    it('deletes a role named by id or by name', async () => {
      const name = unique('gone')
      const roleId = (await sdk().permissions.createRole({ name })).data.roleId
      await sdk().permissions.deleteRole({ role: name })
      await expect(sdk().permissions.getRole({ role: roleId })).rejects.toMatchObject({
        name: 'NotFoundErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/role_not_found' } },
      })
      const other = (await sdk().permissions.createRole({ name: unique('gone') })).data.roleId
      await sdk().permissions.deleteRole({ role: other })
      expect((await post('permissions.getRole', { role: other })).status).toBe(404)
    })
  })

  describe('errors', () => {
    it('409 for a slug or a role name already taken, typed as Unkey types them', async () => {
      const { slug } = await createPermission()
      const again = await post('permissions.createPermission', { name: 'another name', slug })
      expect(again).toMatchObject({
        status: 409,
        body: { error: { type: 'https://unkey.com/docs/errors/unkey/data/permission_already_exists' } },
      })
      expect(again.body.error.detail).toContain('already exists')
      await expect(sdk().permissions.createPermission({ name: 'x', slug })).rejects.toMatchObject({
        name: 'ConflictErrorResponse',
      })
      const name = unique('taken')
      await sdk().permissions.createRole({ name })
      const missing = unique('not.made')
      await expect(sdk().permissions.createRole({ name, permissions: [missing] })).rejects.toMatchObject({
        name: 'ConflictErrorResponse',
        data$: { error: { type: 'https://unkey.com/docs/errors/unkey/data/role_already_exists' } },
      })
      // Refused before anything was made on the way.
      expect((await post('permissions.getPermission', { permission: missing })).status).toBe(404)
    })

    it('404 for a permission or role that does not exist', async () => {
      for (const [operation, body, type] of [
        ['getPermission', { permission: 'perm_nope' }, 'permission_not_found'],
        ['deletePermission', { permission: 'no.such.slug' }, 'permission_not_found'],
        ['getRole', { role: 'role_nope' }, 'role_not_found'],
        ['deleteRole', { role: 'no such role' }, 'role_not_found'],
        ['setRolePermissions', { roleId: 'role_nope', permissions: [] }, 'role_not_found'],
      ] as const) {
        const missing = await post(`permissions.${operation}`, body)
        expect(missing, operation).toMatchObject({
          status: 404,
          body: { error: { type: `https://unkey.com/docs/errors/unkey/data/${type}` } },
        })
      }
    })

    it("400 for what Unkey's schemas refuse, naming the field", async () => {
      const cases: [string, object, string][] = [
        ['createPermission', { name: 'no slug' }, 'body.slug'],
        ['createPermission', { slug: 'no.name' }, 'body.name'],
        ['createPermission', { name: '', slug: 'a' }, 'body.name'],
        ['createPermission', { name: 'a', slug: '' }, 'body.slug'],
        ['createPermission', { name: 'a', slug: 'has spaces' }, 'body.slug'],
        ['createPermission', { name: 'a', slug: 'a@b#c' }, 'body.slug'],
        ['createPermission', { name: 'a', slug: 'x'.repeat(129) }, 'body.slug'],
        ['createPermission', { name: 'a', slug: 'a', description: 'x'.repeat(513) }, 'body.description'],
        ['createPermission', { name: 'a', slug: 'a', extra: true }, 'body'],
        ['getPermission', {}, 'body.permission'],
        ['listPermissions', { limit: 101 }, 'body.limit'],
        ['createRole', {}, 'body.name'],
        ['createRole', { name: 'x'.repeat(129) }, 'body.name'],
        ['createRole', { name: 'r', permissions: ['bad slug'] }, 'body.permissions'],
        ['getRole', { role: '' }, 'body.role'],
        ['listRoles', { cursor: 5 }, 'body.cursor'],
        ['setRolePermissions', { permissions: [] }, 'body.roleId'],
        ['setRolePermissions', { roleId: 'role_missing' }, 'body.permissions'],
        ['setRolePermissions', { roleId: 'role_missing', permissions: [''] }, 'body.permissions'],
      ]
      for (const [operation, body, location] of cases) {
        const refused = await post(`permissions.${operation}`, body)
        expect(refused, `${operation} ${JSON.stringify(body)}`).toMatchObject({
          status: 400,
          body: { error: { type: 'https://unkey.com/docs/errors/unkey/application/invalid_input' } },
        })
        expect(refused.body.error.errors[0].location, `${operation} ${JSON.stringify(body)}`).toContain(location)
      }
      await expect(sdk().permissions.getRole({ role: '' })).rejects.toMatchObject({ name: 'BadRequestErrorResponse' })
    })
  })

  describe('security', () => {
    it('401 for an unknown root key', async () => {
      await expect(unkeySdk(stack.controlPlane, 'wrong').permissions.listRoles({})).rejects.toMatchObject({
        name: 'UnauthorizedErrorResponse',
      })
    })

    it('403 without the rbac permission each call needs, and with it 200', async () => {
      const { id: permissionId, slug } = await createPermission()
      const roleName = unique('secured')
      const roleId = (await sdk().permissions.createRole({ name: roleName })).data.roleId
      const calls: [string, string, () => object][] = [
        ['createPermission', 'rbac.*.create_permission', () => ({ name: 'n', slug: unique('sec') })],
        ['getPermission', 'rbac.*.read_permission', () => ({ permission: permissionId })],
        ['listPermissions', 'rbac.*.read_permission', () => ({ limit: 1 })],
        ['createRole', 'rbac.*.create_role', () => ({ name: unique('sec') })],
        ['getRole', 'rbac.*.read_role', () => ({ role: roleId })],
        ['listRoles', 'rbac.*.read_role', () => ({ limit: 1 })],
        ['deleteRole', 'rbac.*.delete_role', () => ({ role: roleName })],
        ['deletePermission', 'rbac.*.delete_permission', () => ({ permission: slug })],
      ]
      const none = await headersWith(['api.*.*', 'identity.*.*'])
      for (const [operation, needs, body] of calls) {
        const refused = await post(`permissions.${operation}`, body(), none)
        expect(refused, operation).toMatchObject({
          status: 403,
          body: { error: { type: 'https://unkey.com/docs/errors/unkey/authorization/insufficient_permissions' } },
        })
        expect(refused.body.error.detail, operation).toContain(needs)
        expect((await post(`permissions.${operation}`, body(), await headersWith([needs]))).status, operation).toBe(200)
      }
    })

    it('a role’s permissions need add_permission_to_role, and create_permission for a missing one', async () => {
      const { slug } = await createPermission()
      const createOnly = await headersWith(['rbac.*.create_role'])
      const name = unique('guarded')
      expect((await post('permissions.createRole', { name, permissions: [slug] }, createOnly)).status).toBe(403)
      const canAdd = await headersWith(['rbac.*.create_role', 'rbac.*.add_permission_to_role'])
      const missing = unique('never.made')
      const refused = await post('permissions.createRole', { name, permissions: [slug, missing] }, canAdd)
      expect(refused.status).toBe(403)
      expect(refused.body.error.detail).toContain('rbac.*.create_permission')
      // Nothing was made: neither the role nor the permission.
      expect((await post('permissions.getRole', { role: name })).status).toBe(404)
      expect((await post('permissions.getPermission', { permission: missing })).status).toBe(404)
      expect((await post('permissions.createRole', { name, permissions: [slug] }, canAdd)).status).toBe(200)
    })

    it('setRolePermissions needs add and remove up front (Unkey’s v2), and create_permission for a missing one', async () => {
      const roleId = (await sdk().permissions.createRole({ name: unique('both') })).data.roleId
      const { slug } = await createPermission()
      for (const grants of [['rbac.*.add_permission_to_role'], ['rbac.*.remove_permission_from_role']]) {
        const refused = await post(
          'permissions.setRolePermissions',
          { roleId, permissions: [] },
          await headersWith(grants),
        )
        expect(refused.status, grants.join()).toBe(403)
      }
      // Before the role is read: a key without them learns nothing of which roles exist.
      const addOnly = await headersWith(['rbac.*.add_permission_to_role'])
      expect(
        (await post('permissions.setRolePermissions', { roleId: 'role_nope', permissions: [] }, addOnly)).status,
      ).toBe(403)
      const both = await headersWith(['rbac.*.add_permission_to_role', 'rbac.*.remove_permission_from_role'])
      expect((await post('permissions.setRolePermissions', { roleId, permissions: [slug] }, both)).status).toBe(200)
      const missing = await post('permissions.setRolePermissions', { roleId, permissions: [unique('nope')] }, both)
      expect(missing.status).toBe(403)
      expect(missing.body.error.detail).toContain('rbac.*.create_permission')
      expect((await sdk().permissions.getRole({ role: roleId })).data.permissions?.map((p) => p.slug)).toEqual([slug])
    })
  })
})
