import { Type, type TSchema } from 'typebox'
import { invalid } from '../../../shared/errors/errors.js'
import { WIRE_EXAMPLES } from '../../../shared/wire-examples.js'
import type { Caller } from '../../caller.js'
import type { ControlPlaneDeps } from '../../control-plane-deps.js'
import type { GrantField } from './key-grants.js'
import { v1Route, type ManagementRoute } from '../../http/management-route.js'
import type { RecordRef } from '../../permissions/rbac.js'
import { KeyIdField, EmptyResponse } from '../../wire/fields.js'
import { LIMITS } from '../../input-limits.js'
import { Slug } from '../../permissions/wire/rbac-schemas.js'
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

/** Each of v1's six grant routes: which list, which change, what the reference calls it and its answer. */
const V1_GRANT_ROUTES: readonly { field: GrantField; change: GrantChange; summary: string; answered?: string }[] = [
  { field: 'permissions', change: 'add', summary: 'Add permissions to a key', answered: 'permission added' },
  {
    field: 'permissions',
    change: 'set',
    summary: "Replace a key's permissions",
    answered: 'permission the key has now',
  },
  // A permission the workspace does not have is skipped.
  { field: 'permissions', change: 'remove', summary: 'Remove permissions from a key' },
  { field: 'roles', change: 'add', summary: 'Add roles to a key', answered: 'role added' },
  { field: 'roles', change: 'set', summary: "Replace a key's roles", answered: 'role the key has now' },
  { field: 'roles', change: 'remove', summary: 'Remove roles from a key' },
]

/**
 * v1's keys.{add,set,remove}{Permissions,Roles}: add answers the records added, set every one the key holds directly
 * now, remove nothing.
 */
export const CHANGE_KEY_GRANTS_V1: readonly ManagementRoute[] = V1_GRANT_ROUTES.map(
  ({ field, change, summary, answered }) =>
    v1Route({
      operation: `keys.${change}${field === 'permissions' ? 'Permissions' : 'Roles'}`,
      method: 'POST',
      doc: { summary, tag: 'keys' },
      input: field === 'permissions' ? PermissionsBody(change) : RolesBody(change),
      answer: answered === undefined ? EmptyResponse : NamedList(answered),
      handle: async (body, caller, deps) => {
        const refs = 'permissions' in body ? body.permissions : body.roles
        const { named, held } = await changeV1(deps, caller, { keyId: body.keyId, field, change, refs })
        return change === 'remove' ? {} : listed(deps, field, change === 'add' ? named : held)
      },
    }),
)
