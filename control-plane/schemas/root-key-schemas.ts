import { Type } from 'typebox'
import { ROOT_KEY_PERMISSION, ROOT_KEY_PERMISSION_FORMAT } from '../../shared/root-key-actions.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { LIMITS } from './key-schemas.js'

/** The wire shapes of rootKeys.*: a root key is shown by id, name, start and permissions, never by hash. */

export const RootKeyId = Type.String({
  minLength: 1,
  maxLength: LIMITS.idLength,
  description: 'the id of a stored root key (root_…), as rootKeys.listRootKeys shows it',
  examples: [WIRE_EXAMPLES.rootKeyId],
})

export const RootKeyPermissions = Type.Array(
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

export const CreateRootKeyBody = Type.Object(
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

export const RootKeyIdBody = Type.Object(
  { rootKeyId: RootKeyId },
  { additionalProperties: false, examples: [{ rootKeyId: WIRE_EXAMPLES.rootKeyId }] },
)

/** A new root key: the only answer that ever holds one. */
export const NewRootKeyResponse = Type.Object({
  rootKeyId: Type.String({ description: 'the id of the new root key (root_…)' }),
  key: Type.String({ description: 'the root key itself: shown this once, only its hash is stored' }),
})

/** A stored root key as clients see it: this schema is the allow-list that keeps the hash off the wire. */
export const RootKeyResponse = Type.Object({
  id: Type.String({ description: 'the id of the root key (root_…)' }),
  name: Type.Optional(Type.String({ description: 'the name it was given' })),
  start: Type.Optional(
    Type.String({ description: 'the first characters of the root key, to recognise it by (absent on early ones)' }),
  ),
  permissions: Type.Array(Type.String(), { description: 'what the root key may do' }),
  createdAt: Type.Number({ description: 'when it was created, unix ms' }),
  lastUsedAt: Type.Optional(
    Type.Number({
      description: 'when it last authenticated a call, unix ms (recorded about once a minute); absent if never',
    }),
  ),
})
