import { Type } from 'typebox'
import type { KeygateServer } from '../../shared/http/build-server.js'
import { registerV2, v2Pagination } from '../../shared/http/v2-route.js'
import { createApi, deleteApi, readApi } from '../apis.js'
import type { ControlPlaneDeps } from '../control-plane-deps.js'
import { listApiKeys } from '../key-listing.js'
import { callerOf } from '../root-key-auth.js'
import type { KeyWrites } from '../key-writes.js'
import { CreateApiBody } from '../schemas/api-schemas.js'
import { EmptyResponse } from '../schemas/key-schemas.js'
import { ApiIdField } from '../schemas/fields.js'
import { ListKeysBody } from './key-bodies.js'
import { KeyData, toKeyData } from './key-data.js'

/** v2's apis.createApi, getApi, deleteApi and listKeys (Unkey's V2Apis* schemas). */
export function registerV2ApiRoutes(app: KeygateServer, deps: ControlPlaneDeps, writes: KeyWrites): void {
  registerV2(
    app,
    'apis.createApi',
    {
      body: CreateApiBody,
      data: Type.Object({
        apiId: Type.String({ description: "The new api's id: pass it as `apiId` to keys.createKey" }),
      }),
    },
    async (request) => ({ data: { apiId: (await createApi(deps, callerOf(request), request.body.name)).id } }),
  )
  registerV2(
    app,
    'apis.getApi',
    {
      body: Type.Object({ apiId: ApiIdField() }, { additionalProperties: false }),
      data: Type.Object({
        id: Type.String({ description: "The api's id" }),
        name: Type.String({ description: 'Its name' }),
      }),
    },
    async (request) => {
      const api = await readApi(deps, callerOf(request), request.body.apiId)
      return { data: { id: api.id, name: api.name } }
    },
  )
  registerV2(
    app,
    'apis.deleteApi',
    {
      body: Type.Object(
        { apiId: ApiIdField('The api to delete, with every key of it: they all stop verifying') },
        { additionalProperties: false },
      ),
      data: EmptyResponse,
    },
    async (request) => {
      await deleteApi(deps, writes, callerOf(request), request.body.apiId)
      return { data: {} }
    },
  )
  registerV2(
    app,
    'apis.listKeys',
    {
      body: ListKeysBody,
      data: Type.Array(KeyData, { description: 'This page of keys, sorted by id (creation order)' }),
      paged: true,
    },
    async (request) => {
      const { apiId, limit = 100, cursor, externalId, decrypt } = request.body
      // The last page carries no cursor: the SDK asks for another page while one comes back.
      const listing = { apiId, limit, cursor, externalId, decrypt, exactEnd: true }
      const page = await listApiKeys(deps, callerOf(request), listing)
      return {
        data: page.keys.map(({ record, context }) => toKeyData(record, context)),
        pagination: v2Pagination(page.cursor),
      }
    },
  )
}
