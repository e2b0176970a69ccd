import { describe, expect, it } from 'vitest'
import { identityAddress } from '../../shared/identity.js'
import { EMPTY_CONTEXT, resolveKeyContext, type KeyContext, type KeyReferences } from '../../shared/keys/key-context.js'
import { keyLimitsOf } from '../../shared/keys/key-limits.js'
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

  // The general resolution (sets of permission ids and slugs), as it was before keys without roles or permissions
  // took a shortcut: the shortcut must give the same context for every shape of key.
  function reference(key: KeyReferences): KeyContext {
    const roles = (key.roleIds ?? []).map((id) => known(roleAddress(id)) as ReturnType<typeof role> | null)
    const identity = key.ownerId === undefined ? null : (known(identityAddress(key.ownerId)) as never)
    const ids = new Set([...(key.permissionIds ?? []), ...roles.flatMap((r) => (r ? r.permissionIds : []))])
    const slugs = [...ids].map((id) => (known(permissionAddress(id)) as { slug: string } | null)?.slug)
    const context: KeyContext = {
      permissions: [...new Set(slugs.filter((slug) => slug !== undefined))].sort(),
      roles: roles.flatMap((r) => (r ? [r.name] : [])).sort(),
    }
    if (identity) context.identity = identity
    const limits = keyLimitsOf(key, identity ?? undefined)
    if (limits) context.limits = limits
    return context
  }

  it('gives the general resolution’s context for every combination of references, empty or absent', () => {
    let cases = 0
    for (const permissionIds of [undefined, [], ['perm_read'], ['perm_gone']])
      for (const roleIds of [undefined, [], ['role_gone'], ['role_editor']])
        for (const ownerId of [undefined, 'acme', 'nobody'])
          for (const ratelimit of [undefined, { limit: 1, duration: 1_000 }])
            for (const ratelimits of [undefined, [], [{ name: 'burst', limit: 2, duration: 1_000 }]]) {
              const key: KeyReferences = { hash: 'h', permissionIds, roleIds, ownerId, ratelimit, ratelimits }
              for (const field of Object.keys(key) as (keyof KeyReferences)[]) {
                if (key[field] === undefined) delete key[field]
              }
              expect(resolveKeyContext(key, known), JSON.stringify(key)).toStrictEqual(reference(key))
              cases++
            }
    expect(cases).toBe(288)
  })
})
