import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonBody } from '../../shared/http/json-body.js'

const refusal = (text: string) => {
  try {
    parseJsonBody(text)
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

/** Whether a string is well-formed Unicode, written plainly: each high surrogate followed by a low one, no other. */
function wellFormed(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xdc00 && c <= 0xdfff) return false
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (!(next >= 0xdc00 && next <= 0xdfff)) return false
      i++
    }
  }
  return true
}

const allStrings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : Array.isArray(value)
      ? value.flatMap(allStrings)
      : typeof value === 'object' && value !== null
        ? Object.entries(value).flatMap(([name, item]) => [name, ...allStrings(item)])
        : []

describe('strings that are not well-formed Unicode in a body', () => {
  it('are refused exactly when the body holds one, as a value or a property name, at any depth', () => {
    // Halves of pairs alone and together, a pair, other text, and the escape's own characters as text.
    const unit = fc.constantFrom('a', 'é', '\ud83d', '\ude00', '\udbff', '\udc00', '😀', '\\', 'u', 'd8')
    const text = fc.array(unit, { maxLength: 4 }).map((units) => units.join(''))
    const body = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.integer(),
        fc.array(tie('value'), { maxLength: 3 }),
        tie('object'),
      ),
      object: fc.dictionary(text, tie('value'), { maxKeys: 3 }),
    })).value
    fc.assert(
      fc.property(body, (value) => {
        const problem = refusal(JSON.stringify(value))
        expect(problem === undefined).toBe(allStrings(value).every(wellFormed))
        if (problem) expect(problem).toMatch(/not well-formed Unicode/)
      }),
      { seed: 70, numRuns: 1_000 },
    )
  })

  it('walks a body nested 200,000 levels deep without the stack, naming a clipped path', () => {
    const deep = `${'['.repeat(200_000)}"\\udc00"${']'.repeat(200_000)}`
    const problem = refusal(deep)!
    expect(problem).toMatch(/^0\.0\.0\.[0.]*…: is not well-formed Unicode/)
    expect(problem.length).toBeLessThan(400)
  })
})
