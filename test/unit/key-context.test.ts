import { describe, expect, it } from 'vitest'
import { identityAddress } from '../../shared/identity.js'
import { EMPTY_CONTEXT, resolveKeyContext } from '../../shared/key-context.js'
import { permissionAddress, roleAddress } from '../../shared/rbac.js'

const perm = (id: string, slug: string) => ({ id, name: slug, slug, createdAt: 0 })
const role = (id: string, name: string, permissionIds: string[]) => ({ id, name, permissionIds, createdAt: 0 })

describe('a key’s context, resolved from the records it references', () => {
  const records = new Map<string, unknown>([
    [permissionAddress('perm_read'), perm('perm_read', 'docs.read')],
    [permissionAddress('perm_write'), perm('perm_write', 'docs.write')],
    [roleAddress('role_editor'), role('role_editor', 'editor', ['perm_write', 'perm_gone'])],
    [permissionAddress('perm_gone'), null],
    [roleAddress('role_gone'), null],
    [identityAddress('acme'), { id: 'id_acme', externalId: 'acme', createdAt: 0 }],
    [identityAddress('nobody'), null],
  ])
  const known = (address: string) => records.get(address)

  it('costs nothing for a key that references nothing', () => {
    expect(resolveKeyContext({ hash: 'h' }, () => undefined)).toBe(EMPTY_CONTEXT)
  })

  it('grants the key’s own permissions and its roles’, skipping records that no longer exist', () => {
    expect(
      resolveKeyContext(
        {
          hash: 'h',
          permissionIds: ['perm_read', 'perm_gone'],
          roleIds: ['role_editor', 'role_gone'],
          ownerId: 'acme',
        },
        known,
      ),
    ).toMatchObject({
      permissions: ['docs.read', 'docs.write'],
      roles: ['editor'],
      identity: { id: 'id_acme', externalId: 'acme', createdAt: 0 },
    })
    expect(resolveKeyContext({ hash: 'h', ownerId: 'nobody' }, known)).toMatchObject({ permissions: [], roles: [] })
  })

  it('names what it lacks: roles and identity first, then the permissions the roles grant', () => {
    const have = new Map<string, unknown>()
    const lookup = (address: string) => have.get(address)
    const key = { hash: 'h', permissionIds: ['perm_read'], roleIds: ['role_editor'], ownerId: 'acme' }
    const first = resolveKeyContext(key, lookup)
    expect(first).toEqual({ missing: [roleAddress('role_editor'), identityAddress('acme')] })
    for (const address of (first as { missing: string[] }).missing) have.set(address, known(address))
    const second = resolveKeyContext(key, lookup)
    expect(second).toEqual({
      missing: [permissionAddress('perm_read'), permissionAddress('perm_write'), permissionAddress('perm_gone')],
    })
    for (const address of (second as { missing: string[] }).missing) have.set(address, known(address))
    expect(resolveKeyContext(key, lookup)).toMatchObject({ permissions: ['docs.read', 'docs.write'] })
  })
})
