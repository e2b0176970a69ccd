import { describe, expect, it } from 'vitest'
import { ApiError } from '../../shared/errors/errors.js'
import {
  can,
  may,
  mayOnSome,
  requirePermission,
  requireRootKeyManagement,
} from '../../control-plane/root-keys/root-key-auth.js'
import { grants, MANAGE_ROOT_KEYS, ROOT_KEY_PERMISSION } from '../../shared/root-keys/root-key-actions.js'

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

describe('managing root keys', () => {
  it('needs rootkey.*.manage, which api.*.* does not include', () => {
    expect(() => requireRootKeyManagement(principal(MANAGE_ROOT_KEYS))).not.toThrow()
    expect(() => requireRootKeyManagement(principal('*'))).not.toThrow()
    expect(() => requireRootKeyManagement(principal('api.*.*'))).toThrow(
      expect.objectContaining({ statusCode: 403, message: expect.stringContaining(MANAGE_ROOT_KEYS) }),
    )
  })

  it('reaches only root keys whose every permission the caller holds (no escalation)', () => {
    const manager = principal(MANAGE_ROOT_KEYS, 'api.api_a.*')
    expect(() => requireRootKeyManagement(manager, ['api.api_a.read_key', MANAGE_ROOT_KEYS])).not.toThrow()
    for (const stronger of ['*', 'api.*.read_key', 'api.api_b.read_key'])
      expect(() => requireRootKeyManagement(manager, ['api.api_a.read_key', stronger])).toThrow(
        expect.objectContaining({ statusCode: 403, message: expect.stringContaining(stronger) }),
      )
  })

  it('grants by scope, id and action, * granting everything and nothing granting *', () => {
    expect(grants('*', '*')).toBe(true)
    expect(grants('api.*.*', '*')).toBe(false)
    expect(grants('api.*.read_key', 'api.api_a.read_key')).toBe(true)
    expect(grants('api.api_a.read_key', 'api.*.read_key')).toBe(false)
    expect(grants('api.*.*', MANAGE_ROOT_KEYS)).toBe(false)
    expect(grants(MANAGE_ROOT_KEYS, MANAGE_ROOT_KEYS)).toBe(true)
  })
})

describe('webhook permissions', () => {
  it('are written webhook.*.<action> or webhook.<endpointId>.<action>', () => {
    for (const permission of [
      'webhook.*.create_endpoint',
      'webhook.*.read_endpoint',
      'webhook.whep_1CX8vvRBsU5tVw7XyZaBcD.update_endpoint',
      'webhook.*.delete_endpoint',
      'webhook.*.replay',
      'webhook.*.send_test',
      'webhook.*.*',
    ])
      expect(ROOT_KEY_PERMISSION.test(permission), permission).toBe(true)
    expect(ROOT_KEY_PERMISSION.test('webhook.*.read_key')).toBe(false)
    expect(ROOT_KEY_PERMISSION.test('webhooks.*.read_endpoint')).toBe(false)
  })

  it('are held by * and webhook.*.*, never by api.*.* (another resource)', () => {
    for (const held of ['*', 'webhook.*.*', 'webhook.*.read_endpoint', 'webhook.whep_a.read_endpoint'])
      expect(may(principal(held), 'webhook', 'whep_a', 'read_endpoint'), held).toBe(true)
    for (const held of ['api.*.*', 'api.whep_a.read_key', 'webhook.whep_b.read_endpoint', 'webhook.*.update_endpoint'])
      expect(may(principal(held), 'webhook', 'whep_a', 'read_endpoint'), held).toBe(false)
    expect(grants('api.*.*', 'webhook.*.create_endpoint')).toBe(false)
    expect(grants('*', 'webhook.*.create_endpoint')).toBe(true)
  })

  it('tell a root key scoped to some endpoints (mayOnSome) from one with the action on none', () => {
    expect(mayOnSome(principal('webhook.whep_b.read_endpoint'), 'webhook', 'read_endpoint')).toBe(true)
    expect(mayOnSome(principal('webhook.whep_b.*'), 'webhook', 'read_endpoint')).toBe(true)
    expect(mayOnSome(principal('*'), 'webhook', 'read_endpoint')).toBe(true)
    for (const held of ['api.*.*', 'webhook.*.update_endpoint', 'identity.*.read_identity'])
      expect(mayOnSome(principal(held), 'webhook', 'read_endpoint'), held).toBe(false)
  })
})
