import { Type, type TSchema } from 'typebox'
import { invalid } from '../../../shared/errors.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { GrantField } from '../../key-grants.js'
import { v1Route } from '../../management-route.js'
import type { RecordRef } from '../../rbac.js'
import { KeyIdField } from '../../schemas/fields.js'
import { EmptyResponse, LIMITS } from '../../schemas/key-schemas.js'
import { Slug } from '../../schemas/rbac-schemas.js'
import { changeKeyGrants, type GrantChange } from './change-key-grants.js'

// Unkey's v1 bodies: [{id?, name?, create?}] (permissions also `slug`, the newer word for their name).
const PermissionRef = () =>
  Type.Object(
    {
      id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The permission's id" })),
      name: Type.Optional({
        ...Slug("The permission's slug (its name unless given one)"),
        examples: ['documents.read'],
      }),
      slug: Type.Optional(Slug("The permission's slug (same as `name`)")),
      create: Type.Optional(
        Type.Boolean({
          description: 'Create the permission if no permission has this name (needs rbac.*.create_permission)',
        }),
      ),
    },
    { additionalProperties: false, description: 'A permission, by id or by name' },
  )

const RoleRef = () =>
  Type.Object(
    {
      id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: "The role's id" })),
      name: Type.Optional(
        Type.String({ minLength: 1, maxLength: 512, description: "The role's name", examples: ['editor'] }),
      ),
      create: Type.Optional(
        Type.Boolean({ description: 'Create the role if no role has this name (needs rbac.*.create_role)' }),
      ),
    },
    { additionalProperties: false, description: 'A role, by id or by name' },
  )

const WHAT: Record<GrantChange, string> = {
  add: 'to add',
  set: 'the key will have, replacing its own',
  remove: 'to remove',
}

const List = <Ref extends TSchema>(ref: Ref, field: GrantField, change: GrantChange) =>
  Type.Array(ref, { minItems: 1, maxItems: LIMITS.namesPerKey, description: `The ${field} ${WHAT[change]}` })

/** The body's example: a name, created if missing when the change grants it. */
const example = (name: string, change: GrantChange) => [{ name, ...(change === 'remove' ? {} : { create: true }) }]

const PermissionsBody = (change: GrantChange) =>
  Type.Object(
    { keyId: KeyIdField(), permissions: List(PermissionRef(), 'permissions', change) },
    {
      additionalProperties: false,
      examples: [{ keyId: WIRE_EXAMPLES.keyId, permissions: example('documents.read', change) }],
    },
  )

const RolesBody = (change: GrantChange) =>
  Type.Object(
    { keyId: KeyIdField(), roles: List(RoleRef(), 'roles', change) },
    { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, roles: example('editor', change) }] },
  )

/** The answer of add and set, each described as a `noun`: by id and name (a permission's is its slug). */
const NamedList = (noun: string) =>
  Type.Array(
    Type.Object({
      id: Type.String({ description: `The ${noun}'s id` }),
      name: Type.String({ description: `The ${noun}'s name` }),
    }),
    { description: `The ${noun}s` },
  )

interface V1Change {
  keyId: string
  field: GrantField
  change: GrantChange
  refs: readonly (RecordRef & { slug?: string })[]
}

/**
 * Unkey v1's rules over changeKeyGrants: a reference needs an id or a name (400, before anything else); a name with
 * no record is made when the reference asks (`create`), and removing one skips it; the rbac actions asked are those
 * the change's effect needs.
 */
function changeV1(deps: ControlPlaneDeps, caller: Caller, { keyId, field, change, refs }: V1Change) {
  const one = field === 'permissions' ? 'permission' : 'role'
  const named = refs.map((ref) => {
    if (ref.id === undefined && ref.name === undefined && ref.slug === undefined) {
      throw invalid(field, `each ${one} needs an id or a name`)
    }
    return { id: ref.id, name: ref.slug ?? ref.name, create: ref.create }
  })
  const missingNames = change === 'remove' ? 'skip' : 'create-if-asked'
  return changeKeyGrants(deps, caller, { keyId, field, change, refs: named, missingNames, rbacRule: 'by-effect' })
}

/** The permissions (roles) `ids` name that still exist, by id and slug (name). */
async function listed(deps: ControlPlaneDeps, field: GrantField, ids: readonly string[]) {
  const records = await Promise.all(
    ids.map((id) => (field === 'permissions' ? deps.rbac.permissions.get(id) : deps.rbac.roles.get(id))),
  )
  return records.flatMap((record) =>
    record ? [{ id: record.id, name: 'slug' in record ? record.slug : record.name }] : [],
  )
}

/** v1's keys.addPermissions: answers the permissions added. */
export const addPermissionsV1 = v1Route({
  operation: 'keys.addPermissions',
  method: 'POST',
  doc: { summary: 'Add permissions to a key', tag: 'keys' },
  input: PermissionsBody('add'),
  answer: NamedList('permission added'),
  handle: async ({ keyId, permissions }, caller, deps) => {
    const { named } = await changeV1(deps, caller, { keyId, field: 'permissions', change: 'add', refs: permissions })
    return listed(deps, 'permissions', named)
  },
})

/** v1's keys.setPermissions: answers every permission the key holds directly now. */
export const setPermissionsV1 = v1Route({
  operation: 'keys.setPermissions',
  method: 'POST',
  doc: { summary: "Replace a key's permissions", tag: 'keys' },
  input: PermissionsBody('set'),
  answer: NamedList('permission the key has now'),
  handle: async ({ keyId, permissions }, caller, deps) => {
    const { held } = await changeV1(deps, caller, { keyId, field: 'permissions', change: 'set', refs: permissions })
    return listed(deps, 'permissions', held)
  },
})

/** v1's keys.removePermissions: a permission the workspace does not have is skipped. */
export const removePermissionsV1 = v1Route({
  operation: 'keys.removePermissions',
  method: 'POST',
  doc: { summary: 'Remove permissions from a key', tag: 'keys' },
  input: PermissionsBody('remove'),
  answer: EmptyResponse,
  handle: async ({ keyId, permissions }, caller, deps) => {
    await changeV1(deps, caller, { keyId, field: 'permissions', change: 'remove', refs: permissions })
    return {}
  },
})

/** v1's keys.addRoles: answers the roles added. */
export const addRolesV1 = v1Route({
  operation: 'keys.addRoles',
  method: 'POST',
  doc: { summary: 'Add roles to a key', tag: 'keys' },
  input: RolesBody('add'),
  answer: NamedList('role added'),
  handle: async ({ keyId, roles }, caller, deps) => {
    const { named } = await changeV1(deps, caller, { keyId, field: 'roles', change: 'add', refs: roles })
    return listed(deps, 'roles', named)
  },
})

/** v1's keys.setRoles: answers every role the key holds now. */
export const setRolesV1 = v1Route({
  operation: 'keys.setRoles',
  method: 'POST',
  doc: { summary: "Replace a key's roles", tag: 'keys' },
  input: RolesBody('set'),
  answer: NamedList('role the key has now'),
  handle: async ({ keyId, roles }, caller, deps) => {
    const { held } = await changeV1(deps, caller, { keyId, field: 'roles', change: 'set', refs: roles })
    return listed(deps, 'roles', held)
  },
})

/** v1's keys.removeRoles: a role the workspace does not have is skipped. */
export const removeRolesV1 = v1Route({
  operation: 'keys.removeRoles',
  method: 'POST',
  doc: { summary: 'Remove roles from a key', tag: 'keys' },
  input: RolesBody('remove'),
  answer: EmptyResponse,
  handle: async ({ keyId, roles }, caller, deps) => {
    await changeV1(deps, caller, { keyId, field: 'roles', change: 'remove', refs: roles })
    return {}
  },
})
