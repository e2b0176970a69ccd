import type { ManagementRoute } from '../http/management-route.js'
import { createApiV1 } from './create-api.v1.js'
import { createApiV2 } from './create-api.v2.js'
import { deleteApiV1 } from './delete-api.v1.js'
import { deleteApiV2 } from './delete-api.v2.js'
import { deleteKeysV1 } from './delete-keys.v1.js'
import { getApiV1 } from './get-api.v1.js'
import { getApiV2 } from './get-api.v2.js'
import { listApisV1 } from './list-apis.v1.js'
import { listKeysV1 } from './list-keys.v1.js'
import { listKeysV2 } from './list-keys.v2.js'
import { updateApiV1 } from './update-api.v1.js'
import { updateApiV2 } from './update-api.v2.js'

/**
 * The apis service in both wire formats (apis.listApis and apis.deleteKeys are v1's only; apis.updateApi is Keygate's
 * own in both).
 */
export const APIS_ROUTES: readonly ManagementRoute[] = [
  createApiV1,
  getApiV1,
  updateApiV1,
  deleteApiV1,
  listApisV1,
  listKeysV1,
  deleteKeysV1,
  createApiV2,
  getApiV2,
  updateApiV2,
  deleteApiV2,
  listKeysV2,
]
