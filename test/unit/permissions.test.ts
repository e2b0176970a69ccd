import { describe, expect, it } from 'vitest'
import { ApiError } from '../../shared/errors.js'
import { can, requirePermission } from '../../control-plane/root-key-auth.js'

const principal = (...permissions: string[]) => ({ rootKeyId: 'root_x', permissions })

describe('root-key permissions', () => {
  it('grants * everything', () => {
    expect(can(principal('*'), 'api_a', 'delete_api')).toBe(true)
    expect(can(principal('*'), '*', 'create_api')).toBe(true)
  })

  it('scopes api.<id>.<action> to that api and that action', () => {
    const p = principal('api.api_a.read_key')
    expect(can(p, 'api_a', 'read_key')).toBe(true)
    expect(can(p, 'api_b', 'read_key')).toBe(false)
    expect(can(p, 'api_a', 'update_key')).toBe(false)
    expect(can(p, '*', 'read_key')).toBe(false)
  })

  it('lets api.*.<action> act on every api, including creating one', () => {
    expect(can(principal('api.*.read_key'), 'api_z', 'read_key')).toBe(true)
    expect(can(principal('api.*.create_api'), '*', 'create_api')).toBe(true)
    expect(can(principal('api.api_a.create_api'), '*', 'create_api')).toBe(false)
  })

  it('throws the contract 403 naming what is missing', () => {
    expect(() => requirePermission(principal('api.api_a.read_key'), 'api_a', 'read_key', 'read_api')).toThrow(ApiError)
    expect(() => requirePermission(principal(), 'api_a', 'read_key')).toThrow(
      expect.objectContaining({
        code: 'INSUFFICIENT_PERMISSIONS',
        statusCode: 403,
        message: expect.stringContaining('api.api_a.read_key'),
      }),
    )
  })
})
