import type { ManagementRoute } from '../http/management-route.js'
import { createIdentityV1 } from './create-identity.v1.js'
import { createIdentityV2 } from './create-identity.v2.js'
import { deleteIdentityV1 } from './delete-identity.v1.js'
import { deleteIdentityV2 } from './delete-identity.v2.js'
import { getIdentityV1 } from './get-identity.v1.js'
import { getIdentityV2 } from './get-identity.v2.js'
import { listIdentitiesV1 } from './list-identities.v1.js'
import { listIdentitiesV2 } from './list-identities.v2.js'
import { updateIdentityV1 } from './update-identity.v1.js'
import { updateIdentityV2 } from './update-identity.v2.js'

/** The identities service in both wire formats. */
export const IDENTITIES_ROUTES: readonly ManagementRoute[] = [
  createIdentityV1,
  getIdentityV1,
  listIdentitiesV1,
  updateIdentityV1,
  deleteIdentityV1,
  createIdentityV2,
  getIdentityV2,
  listIdentitiesV2,
  updateIdentityV2,
  deleteIdentityV2,
]
