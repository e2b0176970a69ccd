import { v1Route } from '../http/management-route.js'
import { NewRootKeyResponse, RootKeyIdBody } from './wire/root-key-schemas.js'
import { rollRootKey } from './roll-root-key.js'

/** rootKeys.rollRootKey: Keygate's own, in v1 style. */
export const rollRootKeyV1 = v1Route({
  operation: 'rootKeys.rollRootKey',
  method: 'POST',
  doc: {
    summary: 'Replace a root key by a new one with the same name and permissions (shown once); the old one is revoked',
    tag: 'rootKeys',
  },
  input: RootKeyIdBody,
  answer: NewRootKeyResponse,
  handle: async ({ rootKeyId }, caller, deps) => {
    const { record, key } = await rollRootKey(deps, caller, rootKeyId)
    return { rootKeyId: record.id, key }
  },
})
