import { Type, type TSchema } from 'typebox'
import { invalid } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2 } from '../../shared/http/v2-route.js'
import type { ResourceAction } from '../../shared/root-key-actions.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { changeKeyGrants, grantIdsOf, type Field, type GrantOperation } from '../key-grants.js'
import type { KeyWrites } from '../key-writes.js'
import type { RecordRef } from '../rbac.js'
import { principalOf, requireAction, requireKeyPermission, callerOf } from '../root-key-auth.js'
import { KeyIdField } from '../schemas/fields.js'
import { LIMITS } from '../schemas/limits.js'
import { Slug } from '../schemas/rbac-schemas.js'
import { permissionsData, rolesData, V2Permission, V2Role } from './rbac-data.js'

interface Rule {
  /** Unkey's rbac actions the root key needs beside api.<apiId|*>.update_key (Unkey v2's handlers, `rbac.T`). */
  actions: ResourceAction<'rbac'>[]
  /** Unkey's `minItems`/`maxItems` for the list. */
  minItems?: number
  maxItems: number
}

// Unkey v2 asks update_key on the key's api for all six, and rbac actions for some: removeRoles and setRoles ask none
// (so a root key with only update_key may set a key's roles but not add one: Unkey's rule, kept so that root keys
// written for Unkey's v2 work alike; v1's routes ask the rbac actions only, as Unkey v1 did).
const RULES: Record<Field, Record<GrantOperation, Rule>> = {
  permissions: {
    add: { actions: ['add_permission_to_key'], minItems: 1, maxItems: 1000 },
    remove: { actions: ['remove_permission_from_key'], minItems: 1, maxItems: 1000 },
    set: { actions: ['add_permission_to_key', 'remove_permission_from_key'], maxItems: 1000 },
  },
  roles: {
    add: { actions: ['add_role_to_key'], minItems: 1, maxItems: 100 },
    remove: { actions: [], minItems: 1, maxItems: 100 },
    set: { actions: [], maxItems: 100 },
  },
}

const WHAT: Record<GrantOperation, string> = {
  add: 'to add to those the key holds',
  remove: 'to take away from the key',
  set: 'the key holds from now on, replacing its own ([] takes all away)',
}

/**
 * v2's keys.add|remove|set{Permissions,Roles} (Unkey's V2Keys*RequestBody): `{keyId, permissions|roles: [id or
 * name]}`, answered with every permission (role) the key holds directly after the change. Over the write v1 makes
 * (key-grants.ts), with v2's rules: a permission slug with no record is created by add and set when the root key
 * may create permissions (else 403); a role is never created, and any name with no record is a 404 (v1's remove
 * skips it). A key still holds at most 100 of each (400 beyond), though Unkey's lists take up to 1000 permissions.
 */
export function registerV2KeyGrantRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  for (const field of ['permissions', 'roles'] as const) {
    for (const operation of ['add', 'remove', 'set'] as const) register(app, deps, writes, field, operation)
  }
}

function register(
  app: KeygateServer,
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  field: Field,
  operation: GrantOperation,
): void {
  const rule = RULES[field][operation]
  const permissions = field === 'permissions'
  const item: TSchema = permissions
    ? Slug('A permission: its slug, or its id')
    : Type.String({ minLength: 1, maxLength: 512, description: 'A role: its name, or its id' })
  const Body = Type.Object(
    {
      keyId: KeyIdField(),
      [field]: Type.Array(item, {
        ...(rule.minItems !== undefined ? { minItems: rule.minItems } : {}),
        maxItems: rule.maxItems,
        description: `The ${field} ${WHAT[operation]}`,
      }),
    },
    {
      additionalProperties: false,
      examples: [{ keyId: WIRE_EXAMPLES.keyId, [field]: [permissions ? 'documents.read' : 'editor'] }],
    },
  )
  const data = Type.Array(permissions ? V2Permission : V2Role, {
    description: `Every ${permissions ? 'permission' : 'role'} the key holds directly after the change (not those its roles grant)`,
  })
  const noun = permissions ? 'Permissions' : 'Roles'
  registerV2(app, `keys.${operation}${noun}`, { body: Body, data }, async (request) => {
    const principal = principalOf(request)
    const body = request.body as { keyId: string } & Record<Field, string[]>
    const { record } = await changeKeyGrants(deps, writes, callerOf(request), {
      field,
      operation,
      keyId: body.keyId,
      resolve: async (_current, heldAfter) => {
        const refs = await refsOf(body[field], (id) =>
          permissions ? deps.rbac.permissions.get(id) : deps.rbac.roles.get(id),
        )
        // Only adding or setting permissions creates the missing ones (Unkey's rule); the rest 404 on them. A key
        // that would hold too many is refused before any is created (the write checks again).
        const create = permissions && operation !== 'remove'
        return permissions
          ? deps.rbac.permissionIdsOf(refs, principal, create, (planned) => {
              const found = planned.flatMap((step) => ('id' in step ? [step.id] : []))
              const made = new Set(planned.flatMap((step) => ('create' in step ? [step.create] : []))).size
              if (heldAfter(found) + made > LIMITS.namesPerKey) {
                throw invalid(field, `a key holds at most ${LIMITS.namesPerKey}`)
              }
            })
          : deps.rbac.roleIdsOf(refs, principal, false)
      },
      allow: (key) => {
        requireKeyPermission(principal, key, 'update_key')
        requireAction(principal, 'rbac', '*', ...rule.actions)
      },
    })
    const ids = grantIdsOf(record, field)
    return { data: permissions ? await permissionsData(deps.rbac, ids) : await rolesData(deps.rbac, ids) }
  })
}

/** v2 names a permission or a role by its id or its name (Unkey matches either): an id that exists wins. */
async function refsOf(values: readonly string[], byId: (id: string) => Promise<unknown>): Promise<RecordRef[]> {
  return Promise.all(values.map(async (value) => ((await byId(value)) ? { id: value } : { name: value })))
}
