import { Type } from 'typebox'
import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { hashKey } from '../../shared/key-material.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf, requirePermission } from '../root-key-auth.js'

const Body = Type.Object({ key: Type.String({ minLength: 1, maxLength: 1024 }) }, { additionalProperties: false })
const Response = Type.Object({
  id: Type.String(),
  name: Type.Optional(Type.String()),
  meta: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  remaining: Type.Optional(Type.Integer()),
  createdAt: Type.Number(),
  enabled: Type.Boolean(),
  identity: Type.Optional(Type.Object({ externalId: Type.String() })),
})

/** Which key is this? For support tooling: looks a plaintext key up by its hash, with read_key on its api. */
export function registerWhoami(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.post('/v1/keys.whoami', { schema: { body: Body, response: { 200: Response } } }, async (request) => {
    const principal = principalOf(request)
    const record = await deps.store.getKeyByHash(hashKey(request.body.key))
    if (!record) throw notFound('no key matches')
    requirePermission(principal, record.apiId, 'read_key')
    return {
      id: record.id,
      name: record.name,
      meta: record.meta,
      remaining: record.remaining,
      createdAt: record.createdAt,
      enabled: record.enabled,
      identity: record.ownerId === undefined ? undefined : { externalId: record.ownerId },
    }
  })
}
