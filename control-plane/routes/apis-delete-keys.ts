import { Type } from 'typebox'
import { notFound } from '../../shared/errors.js'
import type { KeygateServer } from '../../shared/http/build-server.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import type { KeyWrites } from '../key-writes.js'
import { principalOf, requirePermission, callerOf } from '../root-key-auth.js'
import { ApiIdField, PermanentField } from '../schemas/fields.js'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'

const Body = Type.Object(
  {
    apiId: ApiIdField('The api whose keys to delete (the api stays): the `apiId` that apis.createApi returned'),
    permanent: PermanentField(),
  },
  { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId }] },
)

/** Deletes every key of an api and keeps the api. `permanent` is accepted: deleted keys are always removed. */
export function registerDeleteKeys(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  app.post(
    '/v1/apis.deleteKeys',
    {
      schema: {
        body: Body,
        response: { 200: Type.Object({ deletedKeys: Type.Integer({ description: 'How many keys were deleted' }) }) },
      },
    },
    async (request) => {
      const principal = principalOf(request)
      const { apiId } = request.body
      requirePermission(principal, apiId, 'delete_key')
      if (!(await deps.store.keys.getApi(apiId))) throw notFound('api', `api ${apiId} not found`)
      const deletedKeys = await writes.deleteAllKeys(apiId)
      await deps.audit.record(callerOf(request), 'apis.deleteKeys', { apiId, after: { deletedKeys } })
      request.log.info({ apiId, deletedKeys, rootKeyId: principal.rootKeyId }, 'api keys deleted')
      return { deletedKeys }
    },
  )
}
