import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { GrantField } from '../../key-grants.js'
import { v2Route } from '../../management-route.js'
import { KeyIdField } from '../../schemas/fields.js'
import { Slug } from '../../schemas/rbac-schemas.js'
import { permissionsData, rolesData, V2Permission, V2Role } from '../../v2/rbac-data.js'
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

/** v2's keys.addPermissions. */
export const addPermissionsV2 = v2Route({
  operation: 'keys.addPermissions',
  doc: { summary: 'Add permissions to a key', tag: 'v2 keys' },
  body: PermissionsBody('add'),
  data: PermissionsData(),
  handle: async ({ keyId, permissions }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'permissions', change: 'add', values: permissions })
    return { data: await permissionsData(deps.rbac, held) }
  },
})

/** v2's keys.removePermissions. */
export const removePermissionsV2 = v2Route({
  operation: 'keys.removePermissions',
  doc: { summary: 'Remove permissions from a key', tag: 'v2 keys' },
  body: PermissionsBody('remove'),
  data: PermissionsData(),
  handle: async ({ keyId, permissions }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'permissions', change: 'remove', values: permissions })
    return { data: await permissionsData(deps.rbac, held) }
  },
})

/** v2's keys.setPermissions: `[]` takes every direct permission away. */
export const setPermissionsV2 = v2Route({
  operation: 'keys.setPermissions',
  doc: { summary: "Replace a key's direct permissions", tag: 'v2 keys' },
  body: PermissionsBody('set'),
  data: PermissionsData(),
  handle: async ({ keyId, permissions }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'permissions', change: 'set', values: permissions })
    return { data: await permissionsData(deps.rbac, held) }
  },
})

/** v2's keys.addRoles. */
export const addRolesV2 = v2Route({
  operation: 'keys.addRoles',
  doc: { summary: 'Add roles to a key', tag: 'v2 keys' },
  body: RolesBody('add'),
  data: RolesData(),
  handle: async ({ keyId, roles }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'roles', change: 'add', values: roles })
    return { data: await rolesData(deps.rbac, held) }
  },
})

/** v2's keys.removeRoles. */
export const removeRolesV2 = v2Route({
  operation: 'keys.removeRoles',
  doc: { summary: 'Remove roles from a key', tag: 'v2 keys' },
  body: RolesBody('remove'),
  data: RolesData(),
  handle: async ({ keyId, roles }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'roles', change: 'remove', values: roles })
    return { data: await rolesData(deps.rbac, held) }
  },
})

/** v2's keys.setRoles: `[]` takes every role away. */
export const setRolesV2 = v2Route({
  operation: 'keys.setRoles',
  doc: { summary: "Replace a key's roles", tag: 'v2 keys' },
  body: RolesBody('set'),
  data: RolesData(),
  handle: async ({ keyId, roles }, caller, deps) => {
    const held = await changeV2(deps, caller, { keyId, field: 'roles', change: 'set', values: roles })
    return { data: await rolesData(deps.rbac, held) }
  },
})
