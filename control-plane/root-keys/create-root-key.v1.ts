import { Type } from 'typebox'
import { ROOT_KEY_PERMISSION, ROOT_KEY_PERMISSION_FORMAT } from '../../shared/root-keys/root-key-actions.js'
import { v1Route } from '../http/management-route.js'
import { LIMITS } from '../input-limits.js'
import { NewRootKeyResponse } from './wire/root-key-schemas.js'
import { createRootKey } from './create-root-key.js'

const RootKeyPermissions = Type.Array(
  Type.String({
    pattern: ROOT_KEY_PERMISSION.source,
    description: ROOT_KEY_PERMISSION_FORMAT,
  }),
  {
    minItems: 1,
    maxItems: LIMITS.namesPerKey,
    description: 'what the root key may do; each must be held by the root key that creates it',
  },
)

const CreateRootKeyBody = Type.Object(
  {
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: LIMITS.nameLength, description: 'a name to recognise the root key by' }),
    ),
    permissions: RootKeyPermissions,
  },
  {
    additionalProperties: false,
    examples: [{ name: 'ci deploys', permissions: ['api.*.create_key', 'api.*.read_key'] }],
  },
)

/** rootKeys.createRootKey: Keygate's own, in v1 style. */
export const createRootKeyV1 = v1Route({
  operation: 'rootKeys.createRootKey',
  method: 'POST',
  doc: {
    summary: 'Create a root key with at most the permissions of the caller (shown once; only its hash is stored)',
    tag: 'rootKeys',
  },
  input: CreateRootKeyBody,
  answer: NewRootKeyResponse,
  handle: async (body, caller, deps) => {
    const { record, key } = await createRootKey(deps, caller, body)
    return { rootKeyId: record.id, key }
  },
})
