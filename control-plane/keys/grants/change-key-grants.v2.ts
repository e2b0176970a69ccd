import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { GrantField } from './key-grants.js'
import { v2Route, type ManagementRoute } from '../../http/management-route.js'
import { KeyIdField } from '../../wire/fields.js'
import { Slug } from '../../permissions/wire/rbac-schemas.js'
import { permissionsData, rolesData, V2Permission, V2Role } from '../../permissions/wire/rbac-data.v2.js'
import { changeKeyGrants, type GrantChange } from './change-key-grants.js'

const WHAT: Record<GrantChange, string> = {
  add: 'to add to those the key holds',
  remove: 'to take away from the key',
  set: 'the key holds from now on, replacing its own ([] takes all away)',
}

/** Unkey's `minItems`/`maxItems` for the list: set may name none; up to 1000 permissions, 100 roles. */
const listSize = (field: GrantField, change: GrantChange) => ({
  ...(change === 'set' ? {} : { minItems: 1 }),
  maxItems: field === 'permissions' ? 1000 : 100,
})

// Unkey's V2Keys*RequestBody: `{keyId, permissions|roles: [id or name]}`.
const PermissionsBody = (change: GrantChange) =>
  Type.Object(
    {
      keyId: KeyIdField(),
      permissions: Type.Array(Slug('A permission: its slug, or its id'), {
        ...listSize('permissions', change),
        description: `The permissions ${WHAT[change]}`,
      }),
    },
    { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, permissions: ['documents.read'] }] },
  )

const RolesBody = (change: GrantChange) =>
  Type.Object(
    {
      keyId: KeyIdField(),
      roles: Type.Array(Type.String({ minLength: 1, maxLength: 512, description: 'A role: its name, or its id' }), {
        ...listSize('roles', change),
        description: `The roles ${WHAT[change]}`,
      }),
    },
    { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, roles: ['editor'] }] },
  )

const PermissionsData = () =>
  Type.Array(V2Permission, {
    description: 'Every permission the key holds directly after the change (not those its roles grant)',
  })
const RolesData = () =>
  Type.Array(V2Role, {
    description: 'Every role the key holds directly after the change (not those its roles grant)',
  })

interface V2Change {
  keyId: string
  field: GrantField
  change: GrantChange
  values: readonly string[]
}

/**
 * Unkey v2's rules over changeKeyGrants: each value names a permission (role) by its id or its name; a permission
 * slug with no record is created by add and set when the root key may create permissions (else 403); a role is never
 * created, and any name with no record is a 404 (v1's remove skips it); the rbac actions asked are fixed per
 * operation. A key still holds at most 100 of each (400 beyond), though Unkey's lists take up to 1000 permissions.
 * Answers the ids the key holds directly after the change.
 */
async function changeV2(
  deps: ControlPlaneDeps,
  caller: Caller,
  { keyId, field, change, values }: V2Change,
): Promise<string[]> {
  const { held } = await changeKeyGrants(deps, caller, {
    keyId,
    field,
    change,
    refs: values.map((idOrName) => ({ idOrName })),
    missingNames: change === 'remove' ? 'not-found' : 'create-permissions',
    rbacRule: 'by-operation',
  })
  return held
}

/** Each of v2's six grant routes, in the reference's order: which list, which change, what the reference calls it. */
const V2_GRANT_ROUTES: readonly { field: GrantField; change: GrantChange; summary: string }[] = [
  { field: 'permissions', change: 'add', summary: 'Add permissions to a key' },
  { field: 'permissions', change: 'remove', summary: 'Remove permissions from a key' },
  // `[]` takes every direct permission away.
  { field: 'permissions', change: 'set', summary: "Replace a key's direct permissions" },
  { field: 'roles', change: 'add', summary: 'Add roles to a key' },
  { field: 'roles', change: 'remove', summary: 'Remove roles from a key' },
  // `[]` takes every role away.
  { field: 'roles', change: 'set', summary: "Replace a key's roles" },
]

/** v2's keys.{add,remove,set}{Permissions,Roles}: each answers what the key holds directly after the change. */
export const CHANGE_KEY_GRANTS_V2: readonly ManagementRoute[] = V2_GRANT_ROUTES.map(({ field, change, summary }) =>
  v2Route({
    operation: `keys.${change}${field === 'permissions' ? 'Permissions' : 'Roles'}`,
    doc: { summary, tag: 'v2 keys' },
    body: field === 'permissions' ? PermissionsBody(change) : RolesBody(change),
    data: field === 'permissions' ? PermissionsData() : RolesData(),
    handle: async (body, caller, deps) => {
      const values = 'permissions' in body ? body.permissions : body.roles
      const held = await changeV2(deps, caller, { keyId: body.keyId, field, change, values })
      return {
        data: field === 'permissions' ? await permissionsData(deps.rbac, held) : await rolesData(deps.rbac, held),
      }
    },
  }),
)
