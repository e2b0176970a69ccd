import { Type } from 'typebox'
import { describe, expect, it } from 'vitest'
import { withBodyExample } from '../../control-plane/openapi/body-example.js'

const examples = (schema: unknown) => (withBodyExample(schema) as { examples?: unknown[] }).examples

describe('withBodyExample', () => {
  it("keeps a body's own example", () => {
    const body = Type.Object({ name: Type.String({ examples: ['a'] }) }, { examples: [{ name: 'own' }] })
    expect(examples(body)).toEqual([{ name: 'own' }])
  })

  it("makes one of the required fields' examples, nested objects and arrays included, optional fields left out", () => {
    const body = Type.Object({
      keyId: Type.String({ examples: ['key_1'] }),
      name: Type.Optional(Type.String({ examples: ['left out'] })),
      limits: Type.Array(Type.Object({ limit: Type.Integer({ examples: [10] }) }), { minItems: 1 }),
      tags: Type.Array(Type.String()),
      credits: Type.Object({ remaining: Type.Integer({ examples: [5] }) }),
    })
    expect(examples(body)).toEqual([{ keyId: 'key_1', limits: [{ limit: 10 }], tags: [], credits: { remaining: 5 } }])
    // A body that is a list (ratelimit.multiLimit's).
    expect(examples(Type.Array(Type.Object({ n: Type.String({ examples: ['x'] }) }), { minItems: 1 }))).toEqual([
      [{ n: 'x' }],
    ])
  })

  it('makes none up: a required field without an example leaves the body without one', () => {
    const body = Type.Object({ keyId: Type.String({ examples: ['key_1'] }), secret: Type.String() })
    expect(examples(body)).toBeUndefined()
    expect(examples(Type.Object({ list: Type.Array(Type.String(), { minItems: 1 }) }))).toBeUndefined()
  })
})
