import { afterAll, describe, expect, it, vi } from 'vitest'
import { openBackend } from '../../shared/store/backend.js'
import { EVERYTHING, grantsOn } from '../support/rbac.js'

const backend = openBackend({ kind: 'memory' })
afterAll(() => backend.close())

describe("a new key's grants", () => {
  it('look each permission and role name up once, whether it exists or is created', async () => {
    const rbac = grantsOn(backend)
    await rbac.createPermission({ name: 'documents.read' })
    await rbac.createRole({ name: 'editor' })
    const permissionLookups = vi.spyOn(rbac.permissions, 'findByName')
    const roleLookups = vi.spyOn(rbac.roles, 'findByName')

    const grants = await rbac.grantsOfNames(
      { permissions: ['documents.read', 'documents.write'], roles: ['editor'] },
      'create-if-allowed',
      EVERYTHING,
    )

    expect(grants.permissionIds).toHaveLength(2)
    expect(grants.roleIds).toHaveLength(1)
    // Planned once each; the missing slug is then created by a name-unique write, not looked up again.
    expect(permissionLookups.mock.calls.map(([name]) => name).sort()).toEqual(['documents.read', 'documents.write'])
    expect(roleLookups.mock.calls.map(([name]) => name)).toEqual(['editor'])
  })
})
