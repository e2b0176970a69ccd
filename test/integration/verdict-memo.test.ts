import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  openBackend,
  startTestControlPlane,
  startTestVerifier,
  TEST_ROOT_KEY,
  type Backend,
  type TestServer,
} from '../support/apps.js'
import { memoOf } from '../../shared/frozen-memo.js'

/**
 * A plain request's verdict (no permissions, limits or costs named) is memoised on the cached key and answered as
 * the same frozen object while the key, its context, the api asked and expiry are unchanged (key-verifier.ts). The
 * fast route serialises such a verdict once and /v1/authorize keeps its gateway answer: both rely on that object
 * being the same, and on a request that names conditions never being answered from the memo.
 */
describe('the verdict memo of plain requests', () => {
  let backend: Backend
  let controlPlane: TestServer
  let verifier: TestServer
  let apiId: string

  beforeAll(async () => {
    backend = await openBackend()
    controlPlane = await startTestControlPlane({ backend })
    verifier = await startTestVerifier({ backend })
    apiId = (await call('apis.createApi', { name: 'memo' })).apiId
  })
  afterAll(async () => {
    await verifier.close()
    await controlPlane.close()
    await backend.close()
  })

  async function call(path: string, payload: object) {
    const headers = { authorization: `Bearer ${TEST_ROOT_KEY}` }
    return (await controlPlane.app.inject({ method: 'POST', url: `/v1/${path}`, headers, payload })).json()
  }
  /** The verifier's verdict, once its cache holds the key (a hit is synchronous). */
  const verify = async (key: string, request: object = {}) => verifier.verifier.verify(key, request)

  it('answers the same frozen verdict to repeated plain requests, and a new one once the key changes', async () => {
    const created = await call('keys.createKey', { apiId, name: 'before' })
    await verify(created.key)
    const first = verifier.verifier.verify(created.key, {})
    expect(first).not.toBeInstanceOf(Promise)
    expect(Object.isFrozen(first)).toBe(true)
    // Where the fast route keeps its serialised answer and /v1/authorize its gateway answer: merely frozen, neither
    // would be kept, and every hit would be serialised again.
    expect(memoOf(first)).toBeDefined()
    expect(verifier.verifier.verify(created.key, {})).toBe(first)
    expect(verifier.verifier.verify(created.key, { apiId })).toMatchObject({ code: 'VALID' })
    await call('keys.updateKey', { keyId: created.keyId, enabled: false })
    await verifier.verifier.pollNow()
    expect(await verify(created.key)).toMatchObject({ valid: false, code: 'DISABLED', name: 'before' })
    expect(verifier.verifier.verify(created.key, {})).toMatchObject({ code: 'DISABLED' })
  })

  it('answers every unknown key with the one NOT_FOUND verdict, which carries a memo too', async () => {
    const unknown = await verify('sk_not_a_key')
    expect(unknown).toStrictEqual({ valid: false, code: 'NOT_FOUND' })
    expect(await verify('sk_not_a_key_either')).toBe(unknown)
    expect(memoOf(unknown)).toBeDefined()
  })

  it('never answers the memo to a request that names permissions or limits, nor lets one replace it', async () => {
    const created = await call('keys.createKey', { apiId, permissions: ['read'] })
    expect(await verify(created.key)).toMatchObject({ valid: true, code: 'VALID' })
    const memo = await verify(created.key)
    expect(await verify(created.key, { permissions: 'write' })).toMatchObject({
      valid: false,
      code: 'INSUFFICIENT_PERMISSIONS',
    })
    expect(await verify(created.key, { permissions: 'read' })).toMatchObject({ valid: true, code: 'VALID' })
    const limited = await verify(created.key, { ratelimits: [{ name: 'memo', limit: 1, duration: 60_000, cost: 2 }] })
    expect(limited).toMatchObject({ valid: false, code: 'RATE_LIMITED' })
    expect(Object.isFrozen(limited)).toBe(false)
    // The plain request's memo is untouched by the others.
    expect(await verify(created.key)).toBe(memo)
  })

  it("follows a change to the key's roles: the plain verdict lists what the key holds now", async () => {
    const permissionId = (await call('permissions.createPermission', { name: 'memo.read' })).permissionId
    const roleId = (await call('permissions.createRole', { name: 'memo-reader', permissions: [{ id: permissionId }] }))
      .roleId
    const created = await call('keys.createKey', { apiId, roles: ['memo-reader'] })
    await verify(created.key)
    expect(await verify(created.key)).toMatchObject({ code: 'VALID', permissions: ['memo.read'] })
    await call('permissions.setRolePermissions', { roleId, permissions: [] })
    await verifier.verifier.pollNow()
    const after = await verify(created.key)
    expect(after).toMatchObject({ code: 'VALID', roles: ['memo-reader'] })
    expect(after).not.toHaveProperty('permissions', ['memo.read'])
  })
})
