import { beforeAll, expect, it } from 'vitest'
import { nameId } from '../../control-plane/name-set.js'
import { newId } from '../../shared/ids.js'
import { generateRootKey } from '../../shared/key-material.js'
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

  it('stores permissions and roles sorted and unique, and shows them on getKey and verifyKey', async () => {
    const { body } = await post('keys.createKey', {
      apiId,
      permissions: ['docs.write', 'docs.read', 'docs.read'],
      roles: ['editor'],
    })
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

  it('adds, sets and removes permissions and roles, and every verifier follows', async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    expect((await verify(key.key, 'docs.read')).valid).toBe(false)

    const added = await post('keys.addPermissions', {
      keyId: key.keyId,
      permissions: [{ name: 'docs.read' }, { name: 'docs.write' }],
    })
    expect(added).toMatchObject({
      status: 200,
      body: [
        { id: nameId('perm', 'docs.read'), name: 'docs.read' },
        { id: nameId('perm', 'docs.write'), name: 'docs.write' },
      ],
    })
    await eventually(async () => (await verify(key.key, { and: ['docs.read', 'docs.write'] })).valid === true)

    expect(
      await post('keys.removePermissions', { keyId: key.keyId, permissions: [{ name: 'docs.write' }] }),
    ).toMatchObject({ status: 200, body: {} })
    await eventually(async () => (await verify(key.key, 'docs.write')).code === 'INSUFFICIENT_PERMISSIONS')
    expect((await verify(key.key, 'docs.read')).valid).toBe(true)

    const set = await post('keys.setPermissions', { keyId: key.keyId, permissions: [{ name: 'admin' }] })
    expect(set.body).toEqual([{ id: nameId('perm', 'admin'), name: 'admin' }])
    await eventually(async () => (await verify(key.key, 'admin')).valid === true)
    expect((await verify(key.key, 'docs.read')).valid).toBe(false)

    expect(
      (await post('keys.addRoles', { keyId: key.keyId, roles: [{ name: 'owner' }, { name: 'billing', id: 'role_x' }] }))
        .body,
    ).toEqual([
      { id: nameId('role', 'billing'), name: 'billing' },
      { id: nameId('role', 'owner'), name: 'owner' },
    ])
    await post('keys.removeRoles', { keyId: key.keyId, roles: [{ name: 'owner' }] })
    await eventually(async () => JSON.stringify((await verify(key.key)).roles) === '["billing"]')
    expect((await post('keys.setRoles', { keyId: key.keyId, roles: [] })).body).toEqual([])
    await post('keys.setPermissions', { keyId: key.keyId, permissions: [] })
    const cleared = (
      await stack.controlPlane.app.inject({
        method: 'GET',
        url: `/v1/keys.getKey?keyId=${key.keyId}`,
        headers: ADMIN_HEADERS,
      })
    ).json()
    expect(cleared).not.toHaveProperty('permissions')
    expect(cleared).not.toHaveProperty('roles')

    await post('keys.updateKey', { keyId: key.keyId, permissions: ['x.y'], roles: ['r'] })
    await eventually(async () => (await verify(key.key, 'x.y')).valid === true)
  })

  it('needs update_key on the key’s api, and validates names and counts', async () => {
    const { body: key } = await post('keys.createKey', { apiId })
    const { key: readerKey, hash } = generateRootKey()
    await stack.backend.store.createRootKey({
      id: newId('root'),
      hash,
      permissions: [`api.${apiId}.read_key`],
      createdAt: Date.now(),
    })
    const reader = { authorization: `Bearer ${readerKey}`, 'content-type': 'application/json' }
    expect(
      (
        await post(
          'keys.addPermissions',
          { keyId: key.keyId, permissions: [{ name: 'p' }] },
          stack.controlPlane,
          reader,
        )
      ).status,
    ).toBe(403)
    expect((await post('keys.addPermissions', { keyId: 'key_missing', permissions: [{ name: 'p' }] })).status).toBe(404)
    expect((await post('keys.addPermissions', { keyId: key.keyId, permissions: [{ name: 'bad name' }] })).status).toBe(
      400,
    )
    expect((await post('keys.addPermissions', { keyId: key.keyId, permissions: [] })).status).toBe(400)
    expect(
      (await post('keys.createKey', { apiId, permissions: Array.from({ length: 101 }, (_, i) => `p${i}`) })).status,
    ).toBe(400)
    await post('keys.setPermissions', {
      keyId: key.keyId,
      permissions: Array.from({ length: 100 }, (_, i) => ({ name: `p${i}` })),
    })
    const over = await post('keys.addPermissions', { keyId: key.keyId, permissions: [{ name: 'one-more' }] })
    expect(over).toMatchObject({ status: 400, body: { error: { message: 'permissions: a key holds at most 100' } } })
  })
})
