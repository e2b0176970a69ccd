import { Type } from 'typebox'
import { badRequest } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { KeyRecord } from '../../shared/records.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { nameId } from '../name-set.js'
import { principalOf, requirePermission } from '../root-key-auth.js'
import { EmptyResponse, LIMITS, NameField } from '../schemas/key-schemas.js'
import { KeyIdField } from '../schemas/fields.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

type Field = 'permissions' | 'roles'
type Operation = 'add' | 'set' | 'remove'

// Unkey's v1 bodies: [{id?, name?, create?}]. Keygate has no separate permission or role records, so the
// name is required; `id` and `create` are accepted and ignored (ids are derived from names).
const NameRef = (noun: string, example: string) =>
  Type.Object(
    {
      name: { ...NameField(`The ${noun}'s name`), examples: [example] },
      id: Type.Optional(
        Type.String({
          maxLength: 256,
          description: `Unkey's ${noun} id: accepted and ignored (the name is the identity)`,
        }),
      ),
      create: Type.Optional(
        Type.Boolean({ description: `Unkey's: accepted and ignored (a ${noun} needs no record of its own)` }),
      ),
    },
    { additionalProperties: false },
  )
const NamedList = (noun: string) =>
  Type.Array(
    Type.Object({
      id: Type.String({ description: `The ${noun}'s id, derived from its name` }),
      name: Type.String({ description: `The ${noun}'s name` }),
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
  operation: Operation,
): void {
  const noun = field === 'permissions' ? 'Permissions' : 'Roles'
  const one = field === 'permissions' ? 'permission' : 'role'
  const example = field === 'permissions' ? 'documents.read' : 'editor'
  const what = { add: 'to add', set: 'the key will have, replacing its own ([] clears them)', remove: 'to remove' }
  const Body = Type.Object(
    {
      keyId: KeyIdField(),
      [field]: Type.Array(NameRef(one, example), {
        maxItems: LIMITS.namesPerKey,
        minItems: operation === 'set' ? 0 : 1,
        description: `The ${field} ${what[operation]}`,
      }),
    },
    { additionalProperties: false, examples: [{ keyId: WIRE_EXAMPLES.keyId, [field]: [{ name: example }] }] },
  )
  const answer =
    operation === 'remove' ? EmptyResponse : NamedList(operation === 'set' ? `${one} the key has now` : `${one} added`)
  app.post(
    `/v1/keys.${operation}${noun}`,
    {
      schema: { body: Body, response: { 200: answer } },
    },
    async (request) => {
      const principal = principalOf(request)
      const body = request.body as { keyId: string } & Record<Field, { name: string }[]>
      const names = body[field].map((ref) => ref.name)
      const next = (current: KeyRecord): string[] => {
        const existing = current[field] ?? []
        if (operation === 'set') return names
        if (operation === 'add') return [...existing, ...names]
        return existing.filter((name) => !names.includes(name))
      }
      let before: KeyRecord | undefined
      const write = await writes.updateKey(
        body.keyId,
        (current) => ({ [field]: next(current) }),
        (record) => {
          before = record
          requirePermission(principal, record.apiId, 'update_key')
          const after = new Set(next(record))
          if (after.size > LIMITS.namesPerKey) throw badRequest(`${field}: a key holds at most ${LIMITS.namesPerKey}`)
        },
      )
      request.log.info(
        { keyId: body.keyId, [field]: write.record[field]?.length ?? 0, rootKeyId: principal.rootKeyId },
        `key ${field} ${operation}`,
      )
      await deps.audit.record(request, `keys.${operation}${noun}`, {
        apiId: write.record.apiId,
        keyId: body.keyId,
        before,
        after: write.record,
      })
      if (operation === 'remove') return {}
      const shown = operation === 'set' ? (write.record[field] ?? []) : [...new Set(names)].sort()
      return shown.map((name) => ({ id: nameId(field === 'permissions' ? 'perm' : 'role', name), name }))
    },
  )
}
