import { Type } from 'typebox'
import { badRequest } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyRecord } from '../../shared/records.js'
import type { ResourceAction } from '../../shared/root-key-actions.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import type { RecordRef } from '../rbac.js'
import { may, principalOf, type Principal } from '../root-key-auth.js'
import { ApiError } from '../../shared/errors.js'
import { EmptyResponse, LIMITS } from '../schemas/key-schemas.js'
import { KeyIdField } from '../schemas/fields.js'
import { Slug } from '../schemas/rbac-schemas.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

export type Field = 'permissions' | 'roles'
type Operation = 'add' | 'set' | 'remove'

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

// Unkey's permission for each change.
const ACTIONS: Record<Field, { add: ResourceAction<'rbac'>; remove: ResourceAction<'rbac'> }> = {
  permissions: { add: 'add_permission_to_key', remove: 'remove_permission_from_key' },
  roles: { add: 'add_role_to_key', remove: 'remove_role_from_key' },
}

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
  operation: Operation,
): void {
  const noun = field === 'permissions' ? 'Permissions' : 'Roles'
  const one = field === 'permissions' ? 'permission' : 'role'
  const example = field === 'permissions' ? 'documents.read' : 'editor'
  const idField = field === 'permissions' ? 'permissionIds' : 'roleIds'
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
        throw badRequest(`${field}: each ${one} needs an id or a name`)
      }
      return { id: ref.id, name: ref.slug ?? ref.name, create: ref.create }
    })
    // 404 for the key, then 403, before anything is created or resolved.
    const current = await writes.readKey(body.keyId)
    const resolve = (named: RecordRef[]) =>
      field === 'permissions'
        ? deps.rbac.permissionIdsOf(named, principal, false)
        : deps.rbac.roleIdsOf(named, principal, false)
    allowKeyGrants(principal, field, operation !== 'remove', operation === 'remove')
    // Removing one the workspace does not have removes nothing (Unkey answers 200); adding or setting it is a 404.
    const ids =
      operation === 'remove' ? await knownIds(refs, (ref) => resolve([{ ...ref, create: false }])) : await resolve(refs)
    // set takes away what the key holds and the list does not name: that needs the remove action too.
    if (operation === 'set' && takesAway(current[idField], ids)) allowKeyGrants(principal, field, true, true)
    const next = (record: KeyRecord): string[] => {
      const existing = record[idField] ?? []
      if (operation === 'set') return ids
      if (operation === 'add') return [...existing, ...ids]
      return existing.filter((id) => !ids.includes(id))
    }
    let before: KeyRecord | undefined
    const write = await writes.updateKey(
      body.keyId,
      (record) => ({ [idField]: next(record) }),
      (record) => {
        before = record
        const removes = operation === 'remove' || (operation === 'set' && takesAway(record[idField], ids))
        allowKeyGrants(principal, field, operation !== 'remove', removes)
        if (new Set(next(record)).size > LIMITS.namesPerKey) {
          throw badRequest(`${field}: a key holds at most ${LIMITS.namesPerKey}`)
        }
      },
    )
    request.log.info(
      { keyId: body.keyId, [field]: write.record[idField]?.length ?? 0, rootKeyId: principal.rootKeyId },
      `key ${field} ${operation}`,
    )
    await deps.audit.record(request, `keys.${operation}${noun}`, {
      apiId: write.record.apiId,
      keyId: body.keyId,
      before,
      after: write.record,
    })
    if (operation === 'remove') return {}
    const shown = operation === 'set' ? (write.record[idField] ?? []) : ids
    const records = await Promise.all(
      shown.map((id) => (field === 'permissions' ? deps.rbac.permissions.get(id) : deps.rbac.roles.get(id))),
    )
    return records.flatMap((record) =>
      record ? [{ id: record.id, name: 'slug' in record ? record.slug : record.name }] : [],
    )
  })
}

/** Whether replacing `held` with `next` takes any id away. */
export function takesAway(held: readonly string[] | undefined, next: readonly string[]): boolean {
  return (held ?? []).some((id) => !next.includes(id))
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

/** Unkey's rbac permissions for changing a key's permissions or roles: adding, and removing when any is taken away. */
export function allowKeyGrants(principal: Principal, field: Field, adds: boolean, removes: boolean): void {
  const needed = [...(adds ? [ACTIONS[field].add] : []), ...(removes ? [ACTIONS[field].remove] : [])]
  const missing = needed.filter((action) => !may(principal, 'rbac', '*', action))
  if (missing.length > 0) {
    throw new ApiError(
      'INSUFFICIENT_PERMISSIONS',
      `the root key needs ${missing.map((action) => `rbac.*.${action}`).join(' and ')}`,
    )
  }
}
