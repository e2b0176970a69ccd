import { describe, expect, it } from 'vitest'
import { Type } from 'typebox'
import { schemaErrorFormatter, validatorCompiler } from '../../shared/http/validation.js'

function messageFor(schema: object, value: unknown, httpPart = 'body'): string | undefined {
  const validate = validatorCompiler({ schema, httpPart, method: 'POST', url: '/' }) as unknown as ((
    v: unknown,
  ) => boolean) & { errors: never[] }
  return validate(value) ? undefined : schemaErrorFormatter(validate.errors, httpPart).message
}

describe('validation messages name the field', () => {
  const schema = Type.Object(
    { apiId: Type.String(), nested: Type.Optional(Type.Object({ n: Type.Integer({ minimum: 1 }) })) },
    { additionalProperties: false },
  )

  it('for wrong types, missing and unknown fields, and ranges', () => {
    expect(messageFor(schema, { apiId: 1 })).toBe('apiId: must be a string')
    expect(messageFor(schema, {})).toBe('apiId: is required')
    expect(messageFor(schema, { apiId: 'a', extra: 1 })).toBe('extra: is not a known field')
    expect(messageFor(schema, { apiId: 'a', nested: { n: 0 } })).toBe('nested.n: must be >= 1')
    expect(messageFor(schema, [])).toBe('body: must be an object')
  })

  it('never coerces body types, but does coerce query strings', () => {
    const flag = Type.Object({ enabled: Type.Boolean() })
    expect(messageFor(flag, { enabled: 'true' })).toBe('enabled: must be a boolean')
    expect(messageFor(flag, { enabled: 'true' }, 'querystring')).toBeUndefined()
  })
})
