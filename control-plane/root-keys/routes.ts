import type { ManagementRoute } from '../http/management-route.js'
import { createRootKeyV1 } from './create-root-key.v1.js'
import { listRootKeysV1 } from './list-root-keys.v1.js'
import { revokeRootKeyV1 } from './revoke-root-key.v1.js'
import { rollRootKeyV1 } from './roll-root-key.v1.js'

/** The root-keys service: Keygate's own, in v1 style only. */
export const ROOT_KEYS_ROUTES: readonly ManagementRoute[] = [
  createRootKeyV1,
  listRootKeysV1,
  revokeRootKeyV1,
  rollRootKeyV1,
]
