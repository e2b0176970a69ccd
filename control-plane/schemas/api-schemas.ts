import { Type } from 'typebox'
import { LIMITS } from './key-schemas.js'

export const CreateApiBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: LIMITS.nameLength }) },
  { additionalProperties: false },
)

export const ApiIdBody = Type.Object(
  { apiId: Type.String({ minLength: 1, maxLength: LIMITS.idLength }) },
  { additionalProperties: false },
)

export const ApiResponse = Type.Object({ id: Type.String(), name: Type.String(), createdAt: Type.Number() })
