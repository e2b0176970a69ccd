import { Type } from 'typebox'
import { ApiError } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { principalOf } from '../root-key-auth.js'

const Entry = Type.Object({
  id: Type.String(),
  at: Type.Number(),
  rootKeyId: Type.String(),
  action: Type.String(),
  apiId: Type.Optional(Type.String()),
  keyId: Type.Optional(Type.String()),
  before: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  after: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  requestId: Type.Optional(Type.String()),
})

/** GET /v1/audit.list: the audit log, newest first, for root keys with `*` (admins). */
export function registerAuditList(app: KeygateServer, deps: ControlPlaneDeps): void {
  app.get(
    '/v1/audit.list',
    {
      schema: {
        querystring: Type.Object({
          cursor: Type.Optional(Type.String({ pattern: '^[0-9]{1,15}-[0-9]{1,15}$' })),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
        }),
        response: { 200: Type.Object({ entries: Type.Array(Entry), cursor: Type.Optional(Type.String()) }) },
      },
    },
    async (request) => {
      if (!principalOf(request).permissions.includes('*'))
        throw new ApiError('INSUFFICIENT_PERMISSIONS', 'the audit log needs a root key with *')
      const limit = request.query.limit ?? 100
      const entries = await deps.store.listAudit({ cursor: request.query.cursor || undefined, limit })
      return { entries, cursor: entries.length === limit ? entries[entries.length - 1]!.id : undefined }
    },
  )
}
