import { Type } from 'typebox'
import { ApiError, invalid } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import {
  allowKeyGrants,
  changeKeyGrants,
  grantIdsOf,
  takesAway,
  type Field,
  type GrantOperation,
} from '../key-grants.js'
import type { KeyWrites } from '../key-writes.js'
import type { RecordRef } from '../rbac.js'
import { principalOf, requireKeyPermission, callerOf } from '../root-key-auth.js'
import { EmptyResponse, LIMITS } from '../schemas/key-schemas.js'
import { KeyIdField } from '../schemas/fields.js'
import { Slug } from '../schemas/rbac-schemas.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

// Unkey's v1 bodies: [{id?, name?, create?}] (permissions also `slug`, the newer word for their name).
const Ref = (noun: string, example: string, field: Field) =>
  Type.Object(
    {
      id: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: `The ${noun}'s id` })),
      name: Type.Optional(
        field === 'permissions'
          ? { ...Slug("The permission's slug (its name unless given one)"), examples: [example] }
          : Type.String({ minLength: 1, maxLength: 512, description: "The role's name", examples: [example] }),
      ),
      ...(field === 'permissions'
        ? {
            slug: Type.Optional(Slug("The permission's slug (same as `name`)")),
          }
        : {}),
      create: Type.Optional(
        Type.Boolean({
          description: `Create the ${noun} if no ${noun} has this name (needs rbac.*.create_${noun === 'permission' ? 'permission' : 'role'})`,
        }),
      ),
    },
    { additionalProperties: false, description: `A ${noun}, by id or by name` },
  )

const NamedList = (noun: string) =>
  Type.Array(
    Type.Object({
      id: Type.String({ description: `The ${noun}'s id` }),
      name: Type.String({ description: `The ${noun}'s ${noun === 'permission' ? 'slug' : 'name'}` }),
    }),
    { description: `The ${noun}s` },
  )

/** keys.add|set|removePermissions and keys.add|set|removeRoles: six routes, one rule table. */
export function registerPermissionAndRoleRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  for (const field of ['permissions', 'roles'] as const) {
    for (const operation of ['add', 'set', 'remove'] as const) register(app, deps, writes, field, operation)
  }
}

function register(
  app: KeygateServer,
  deps: ControlPlaneDeps,
  writes: KeyWrites,
  field: Field,
  operation: GrantOperation,
): void {
  const noun = field === 'permissions' ? 'Permissions' : 'Roles'
  const one = field === 'permissions' ? 'permission' : 'role'
  const example = field === 'permissions' ? 'documents.read' : 'editor'
  const what = { add: 'to add', set: 'the key will have, replacing its own', remove: 'to remove' }
  const Body = Type.Object(
    {
      keyId: KeyIdField(),
      [field]: Type.Array(Ref(one, example, field), {
        minItems: 1,
        maxItems: LIMITS.namesPerKey,
        description: `The ${field} ${what[operation]}`,
      }),
    },
    {
      additionalProperties: false,
      examples: [
        {
          keyId: WIRE_EXAMPLES.keyId,
          [field]: [{ name: example, ...(operation === 'remove' ? {} : { create: true }) }],
        },
      ],
    },
  )
  const answer =
    operation === 'remove' ? EmptyResponse : NamedList(operation === 'set' ? `${one} the key has now` : `${one} added`)
  app.post(`/v1/keys.${operation}${noun}`, { schema: { body: Body, response: { 200: answer } } }, async (request) => {
    const principal = principalOf(request)
    const body = request.body as { keyId: string } & Record<Field, (RecordRef & { slug?: string })[]>
    const refs = body[field].map((ref) => {
      if (ref.id === undefined && ref.name === undefined && ref.slug === undefined) {
        throw invalid(field, `each ${one} needs an id or a name`)
      }
      return { id: ref.id, name: ref.slug ?? ref.name, create: ref.create }
    })
    const resolve = (named: RecordRef[]) =>
      field === 'permissions'
        ? deps.rbac.permissionIdsOf(named, principal, false)
        : deps.rbac.roleIdsOf(named, principal, false)
    const { ids, record } = await changeKeyGrants(deps, writes, callerOf(request), {
      field,
      operation,
      keyId: body.keyId,
      // Removing one the workspace does not have removes nothing (Unkey answers 200); adding or setting it is a 404.
      resolve: () =>
        operation === 'remove' ? knownIds(refs, (ref) => resolve([{ ...ref, create: false }])) : resolve(refs),
      // Unkey v1 asks only rbac permissions; Keygate asks update_key on the key's api as well, as v2 does: a root key
      // with no right on an api must not change what that api's keys are granted. Set takes away what the key holds
      // and the list does not name: that needs the remove action too.
      allow: (key, ids) => {
        requireKeyPermission(principal, key, 'update_key')
        const removes =
          operation === 'remove' || (operation === 'set' && ids !== undefined && takesAway(grantIdsOf(key, field), ids))
        allowKeyGrants(principal, field, operation !== 'remove', removes)
      },
    })
    if (operation === 'remove') return {}
    const shown = operation === 'set' ? grantIdsOf(record, field) : ids
    const records = await Promise.all(
      shown.map((id) => (field === 'permissions' ? deps.rbac.permissions.get(id) : deps.rbac.roles.get(id))),
    )
    return records.flatMap((record) =>
      record ? [{ id: record.id, name: 'slug' in record ? record.slug : record.name }] : [],
    )
  })
}

/** The ids of the references that name an existing record; the others are skipped. */
async function knownIds(refs: RecordRef[], resolve: (ref: RecordRef) => Promise<string[]>): Promise<string[]> {
  const ids: string[] = []
  for (const ref of refs) {
    try {
      ids.push(...(await resolve(ref)))
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'NOT_FOUND')) throw err
    }
  }
  return ids
}
