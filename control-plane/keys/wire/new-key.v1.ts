import type { NewKey } from '../key-fields.js'
import { rateLimitOf } from '../rules/rate-limit-body.js'
import { ownerIdOf } from '../rules/v1-field-rules.js'
import type { NewKeyFields } from './key-schemas.js'

/**
 * A new key as v1 gives it (keys.createKey, migrations.createKeys), in the keys domain's terms: `ownerId` and the
 * rate limit's deprecated spellings resolved. Throws the contract's 400 when an alias disagrees or a limit is half.
 */
export function newKeyOfV1({ ownerId, externalId, ratelimit, ...fields }: NewKeyFields): NewKey {
  return {
    ...fields,
    externalId: ownerIdOf({ externalId, ownerId }) ?? undefined,
    ratelimit: rateLimitOf(ratelimit) ?? undefined,
  }
}
