import type { ManagementRoute } from '../http/management-route.js'
import { createPermissionV1 } from './create-permission.v1.js'
import { createPermissionV2 } from './create-permission.v2.js'
import { createRoleV1 } from './create-role.v1.js'
import { createRoleV2 } from './create-role.v2.js'
import { deletePermissionV1 } from './delete-permission.v1.js'
import { deletePermissionV2 } from './delete-permission.v2.js'
import { deleteRoleV1 } from './delete-role.v1.js'
import { deleteRoleV2 } from './delete-role.v2.js'
import { getPermissionV1 } from './get-permission.v1.js'
import { getPermissionV2 } from './get-permission.v2.js'
import { getRoleV1 } from './get-role.v1.js'
import { getRoleV2 } from './get-role.v2.js'
import { listPermissionsV1 } from './list-permissions.v1.js'
import { listPermissionsV2 } from './list-permissions.v2.js'
import { listRolesV1 } from './list-roles.v1.js'
import { listRolesV2 } from './list-roles.v2.js'
import { setRolePermissionsV1 } from './set-role-permissions.v1.js'
import { setRolePermissionsV2 } from './set-role-permissions.v2.js'

/** The permissions service (permissions and roles) in both wire formats. */
export const PERMISSIONS_ROUTES: readonly ManagementRoute[] = [
  createPermissionV1,
  getPermissionV1,
  listPermissionsV1,
  deletePermissionV1,
  createRoleV1,
  getRoleV1,
  listRolesV1,
  deleteRoleV1,
  setRolePermissionsV1,
  createPermissionV2,
  getPermissionV2,
  listPermissionsV2,
  deletePermissionV2,
  createRoleV2,
  getRoleV2,
  listRolesV2,
  deleteRoleV2,
  setRolePermissionsV2,
]
