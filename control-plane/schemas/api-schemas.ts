import { Type } from 'typebox'
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
