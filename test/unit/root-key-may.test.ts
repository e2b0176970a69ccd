import { describe, expect, it } from 'vitest'
import { may } from '../../control-plane/root-keys/root-key-auth.js'

describe('a root key’s rights on a record named in a request', () => {
  const principal = { rootKeyId: 'root_x', permissions: ['identity.id_X.read_identity', 'api.*.read_key'] }

  it('grant the record named and, through *, every record', () => {
    expect(may(principal, 'identity', 'id_X', 'read_identity')).toBe(true)
    expect(may(principal, 'identity', 'id_Y', 'read_identity')).toBe(false)
    expect(may(principal, 'api', 'api_anything', 'read_key')).toBe(true)
  })

  it('never match an id that holds a dot: it could pose as `<id>.<action>` of a permission held', () => {
    // `identity.id_X.read_identity` must not grant update_identity on the id "id_X.read_identity".
    expect(may(principal, 'identity', 'id_X.read_identity', 'update_identity')).toBe(false)
    expect(may(principal, 'api', 'a.b', 'read_key')).toBe(true)
    expect(may({ rootKeyId: 'root_y', permissions: ['*'] }, 'identity', 'id_X.read_identity', 'update_identity')).toBe(
      true,
    )
  })
})
