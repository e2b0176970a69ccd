import type { ManagementRoute } from '../http/management-route.js'
import { deleteOverrideV1 } from './delete-override.v1.js'
import { deleteOverrideV2 } from './delete-override.v2.js'
import { getOverrideV1 } from './get-override.v1.js'
import { getOverrideV2 } from './get-override.v2.js'
import { limitV1 } from './limit.v1.js'
import { listNamespacesV1 } from './list-namespaces.v1.js'
import { listOverridesV1 } from './list-overrides.v1.js'
import { listOverridesV2 } from './list-overrides.v2.js'
import { setOverrideV1 } from './set-override.v1.js'
import { setOverrideV2 } from './set-override.v2.js'

/**
 * The ratelimits service in both wire formats. v2's ratelimit.limit and multiLimit are not here: the verifier serves
 * them too, from the one registration they share (control-plane/ratelimits/wire/ratelimit-routes.v2.ts).
 */
export const RATELIMITS_ROUTES: readonly ManagementRoute[] = [
  limitV1,
  setOverrideV1,
  getOverrideV1,
  listOverridesV1,
  listNamespacesV1,
  deleteOverrideV1,
  setOverrideV2,
  getOverrideV2,
  listOverridesV2,
  deleteOverrideV2,
]
