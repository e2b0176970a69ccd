import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import { LIMITS } from '../../input-limits.js'

/** The wire shapes several rootKeys.* calls share: a root key is named by its id, never by its hash. */

export const RootKeyId = Type.String({
  minLength: 1,
  maxLength: LIMITS.idLength,
  description: 'the id of a stored root key (root_…), as rootKeys.listRootKeys shows it',
  examples: [WIRE_EXAMPLES.rootKeyId],
})

export const RootKeyIdBody = Type.Object(
  { rootKeyId: RootKeyId },
  { additionalProperties: false, examples: [{ rootKeyId: WIRE_EXAMPLES.rootKeyId }] },
)

/** A new root key: the only answer that ever holds one. */
export const NewRootKeyResponse = Type.Object({
  rootKeyId: Type.String({ description: 'the id of the new root key (root_…)' }),
  key: Type.String({ description: 'the root key itself: shown this once, only its hash is stored' }),
})
