import { Type } from 'typebox'
import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { principalOf, requirePermission } from '../root-key-auth.js'

const Body = Type.Object(
  { apiId: Type.String({ minLength: 1, maxLength: 256 }), permanent: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
)

/** Deletes every key of an api and keeps the api. `permanent` is accepted: deleted keys are always removed. */
export function registerDeleteKeys(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/apis.deleteKeys',
    { schema: { body: Body, response: { 200: Type.Object({ deletedKeys: Type.Integer() }) } } },
    async (request) => {
      const principal = principalOf(request)
      const { apiId } = request.body
      requirePermission(principal, apiId, 'delete_key')
      if (!(await deps.store.getApi(apiId))) throw notFound(`api ${apiId} not found`)
      const deletedKeys = await writes.deleteAllKeys(apiId)
      await deps.audit.record(request, 'apis.deleteKeys', { apiId, after: { deletedKeys } })
      request.log.info({ apiId, deletedKeys, rootKeyId: principal.rootKeyId }, 'api keys deleted')
      return { deletedKeys }
    },
  )
}
