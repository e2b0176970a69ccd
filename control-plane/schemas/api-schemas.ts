import { Type } from 'typebox'
import { WIRE_EXAMPLES } from '../../shared/wire-examples.js'
import { ApiIdField, WorkspaceIdField } from './fields.js'
import { LIMITS } from './limits.js'

export const CreateApiBody = Type.Object(
  {
    // At least 3 characters, as Unkey v1 requires (its v1_apis_createApi.error tests refuse '' and 'ab').
    name: Type.String({
      minLength: 3,
      maxLength: LIMITS.nameLength,
      description: 'A name for people, 3–256 characters (not unique: the api is known by the id it gets)',
      examples: ['payments'],
    }),
  },
  { additionalProperties: false, examples: [{ name: 'payments' }] },
)

export const ApiIdBody = (description: string) =>
  Type.Object(
    { apiId: ApiIdField(description) },
    { additionalProperties: false, examples: [{ apiId: WIRE_EXAMPLES.apiId }] },
  )

export const ApiResponse = Type.Object({
  id: Type.String({ description: "The api's id (`apiId` elsewhere)" }),
  workspaceId: WorkspaceIdField(),
  name: Type.String({ description: 'Its name' }),
})
