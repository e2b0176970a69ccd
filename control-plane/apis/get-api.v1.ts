import { Type } from 'typebox'
import { v1Route } from '../http/management-route.js'
import { ApiIdField, WorkspaceIdField } from '../wire/fields.js'
import { WORKSPACE_ID } from '../workspace.js'
import { getApi } from './get-api.js'

/**
 * v1's apis.getApi: a GET; exactly Unkey's three fields, as its tests hold the body to them (an api with an IP
 * allow-list too). v1 reads an api's settings in apis.updateApi's answer.
 */
export const getApiV1 = v1Route({
  operation: 'apis.getApi',
  method: 'GET',
  doc: { summary: 'Read an api', tag: 'apis' },
  input: Type.Object({ apiId: ApiIdField() }),
  answer: Type.Object({
    id: Type.String({ description: "The api's id (`apiId` elsewhere)" }),
    workspaceId: WorkspaceIdField(),
    name: Type.String({ description: 'Its name' }),
  }),
  handle: async ({ apiId }, caller, deps) => {
    const { api } = await getApi(deps, caller, apiId)
    return { id: api.id, workspaceId: WORKSPACE_ID, name: api.name }
  },
})
