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

describe('validation messages teach', () => {
  const body = Type.Object(
    {
      apiId: Type.String({ minLength: 1, maxLength: 8 }),
      name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
      op: Type.Optional(Type.Union([Type.Literal('increment'), Type.Literal('set')])),
      interval: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: ['daily', 'monthly'] })),
      refill: Type.Optional(
        Type.Union([
          Type.Object({ amount: Type.Integer(), day: Type.Optional(Type.Integer()) }, { additionalProperties: false }),
          Type.Null(),
        ]),
      ),
      tags: Type.Optional(Type.Array(Type.String(), { minItems: 1, maxItems: 2 })),
    },
    { additionalProperties: false },
  )

  it('says what a length or a count must be, in words', () => {
    expect(messageFor(body, { apiId: '' })).toBe('apiId: must not be empty')
    expect(messageFor(body, { apiId: 'x'.repeat(9) })).toBe('apiId: must be at most 8 characters')
    expect(messageFor(Type.Object({ k: Type.String({ minLength: 3 }) }), { k: 'ab' })).toBe(
      'k: must be at least 3 characters',
    )
    expect(messageFor(body, { apiId: 'a', tags: [] })).toBe('tags: must not be empty')
    expect(messageFor(body, { apiId: 'a', tags: ['a', 'b', 'c'] })).toBe('tags: must have at most 2 items')
  })

  it('names an unknown field even when a required one is missing too, and the field it may have meant', () => {
    expect(messageFor(body, { apiid: 'a' })).toBe(
      'apiid: is not a known field (did you mean apiId?); apiId: is required',
    )
    expect(messageFor(body, { apiId: 'a', nmae: 'x' })).toBe('nmae: is not a known field (did you mean name?)')
    expect(messageFor(body, { apiId: 'a', colour: 'x' })).toBe('colour: is not a known field')
    expect(messageFor(body, { apiId: 'a', refill: { amout: 1 } })).toBe(
      'refill.amout: is not a known field (did you mean amount?); refill.amount: is required',
    )
  })

  it('lists the values a choice allows, and the types a nullable field takes', () => {
    expect(messageFor(body, { apiId: 'a', op: 'add' })).toBe('op: must be one of "increment", "set"')
    expect(messageFor(body, { apiId: 'a', interval: 'weekly' })).toBe('interval: must be one of "daily", "monthly"')
    expect(messageFor(body, { apiId: 'a', name: 5 })).toBe('name: must be a string or null')
    expect(messageFor(body, { apiId: 'a', refill: 'daily' })).toBe('refill: must be an object or null')
    // A value of the right type fails inside its branch: that is what is named.
    expect(messageFor(body, { apiId: 'a', refill: { amount: 'x' } })).toBe('refill.amount: must be an integer')
  })
})

describe("validation failures are located for v2's errors", () => {
  const schema = Type.Object(
    {
      apiId: Type.String(),
      nested: Type.Optional(Type.Object({ n: Type.Integer() }, { additionalProperties: false })),
    },
    { additionalProperties: false },
  )
  const fieldsFor = (value: unknown, httpPart = 'body') => {
    const validate = validatorCompiler({ schema, httpPart, method: 'POST', url: '/' }) as unknown as ((
      v: unknown,
    ) => boolean) & { errors: never[] }
    return validate(value) ? undefined : schemaErrorFormatter(validate.errors, httpPart).details?.fields
  }

  it('at the field in its request part, or at the part itself', () => {
    expect(fieldsFor({ apiId: 1 })).toEqual([{ location: 'body.apiId', message: 'must be a string' }])
    expect(fieldsFor({ apiId: 'a', nested: { n: 'x' } })).toEqual([
      { location: 'body.nested.n', message: 'must be an integer' },
    ])
    expect(fieldsFor([])).toEqual([{ location: 'body', message: 'must be an object' }])
    expect(fieldsFor({}, 'querystring')).toEqual([{ location: 'query.apiId', message: 'is required' }])
  })

  it('one named by the client outside the names a path holds at the body, the message quoting it', () => {
    expect(fieldsFor({ apiId: 'a', nested: { n: 1, 'odd name': 1 } })).toEqual([
      { location: 'body', message: 'nested.odd name: is not a known field' },
    ])
    // A body field is the body's, whatever its name.
    expect(fieldsFor({ apiId: 'a', authorization: 'x' })).toEqual([
      { location: 'body.authorization', message: 'is not a known field' },
    ])
  })
})
