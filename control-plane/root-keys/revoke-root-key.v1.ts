import { v1Route } from '../http/management-route.js'
import { EmptyResponse } from '../wire/fields.js'
import { RootKeyIdBody } from './wire/root-key-schemas.js'
import { revokeRootKey } from './revoke-root-key.js'

/** rootKeys.revokeRootKey: Keygate's own, in v1 style. */
export const revokeRootKeyV1 = v1Route({
  operation: 'rootKeys.revokeRootKey',
  method: 'POST',
  doc: { summary: 'Revoke a root key: refused from the next call on', tag: 'rootKeys' },
  input: RootKeyIdBody,
  answer: EmptyResponse,
  handle: async ({ rootKeyId }, caller, deps) => {
    await revokeRootKey(deps, caller, rootKeyId)
    return {}
  },
})
