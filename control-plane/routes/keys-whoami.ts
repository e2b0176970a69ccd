import { Type } from 'typebox'
import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { hashKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyRecord } from '../../shared/records.js'
import { principalOf, requireKeyPermission } from '../root-key-auth.js'
import { CreatedAtField } from '../schemas/fields.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

const Body = Type.Object(
  {
    key: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'A key itself (as keys.createKey returned it once), to find its record',
      examples: [WIRE_EXAMPLES.key],
    }),
  },
  { additionalProperties: false, examples: [{ key: WIRE_EXAMPLES.key }] },
)
const Response = Type.Object({
  id: Type.String({ description: "The key's id" }),
  name: Type.Optional(Type.String({ description: 'Its name' })),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Its meta' })),
  remaining: Type.Optional(Type.Integer({ description: 'Credits left (keys with credits only)' })),
  createdAt: CreatedAtField(),
  enabled: Type.Boolean({ description: 'Whether it verifies' }),
  environment: Type.Optional(Type.String({ description: 'Its environment label' })),
  identity: Type.Optional(
    Type.Object(
      {
        id: Type.Optional(Type.String({ description: "The identity's id, when an identity has this externalId" })),
        externalId: Type.String({ description: 'Who it belongs to' }),
      },
      { description: 'Its owner, when it has one' },
    ),
  ),
})

/** Which key is this? For support tooling: looks a plaintext key up by its hash, with read_key on its api. */
export function registerWhoami(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post('/v1/keys.whoami', { schema: { body: Body, response: { 200: Response } } }, async (request) => {
    const principal = principalOf(request)
    const record = await deps.store.keys.getKeyByHash(hashKey(request.body.key))
    if (!record) throw notFound('key', 'no key matches')
    requireKeyPermission(principal, record, 'read_key')
    return {
      id: record.id,
      name: record.name,
      meta: record.meta,
      remaining: record.remaining,
      createdAt: record.createdAt,
      enabled: record.enabled,
      environment: record.environment,
      // The identity record bound through the externalId (Unkey's {id, externalId}); its externalId alone if none.
      identity: record.ownerId === undefined ? undefined : await whoamiIdentity(deps, record, record.ownerId),
    }
  })
}

async function whoamiIdentity(deps: ControlPlaneDeps, record: KeyRecord, externalId: string) {
  const context = await deps.rbac.contextOf(record)
  return context.identity ? { id: context.identity.id, externalId } : { externalId }
}
