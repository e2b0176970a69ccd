import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { parseJsonBody } from '../../shared/http/json-body.js'
import { jsonSyntaxProblem } from '../../shared/http/json-syntax.js'

const messageOf = (text: string) => {
  try {
    parseJsonBody(text)
    return undefined
  } catch (err) {
    return (err as Error).message
  }
}

describe('a body that is not JSON', () => {
  it('is refused with the position where it stops being JSON, and what was expected there', () => {
    expect(messageOf('{"key": "a",}')).toBe(
      "body: is not valid JSON: unexpected '}' at position 12 (expected a property name in double quotes)",
    )
    expect(messageOf('{"key":')).toBe(
      'body: is not valid JSON: unexpected end of body at position 7 (expected a value: an object, array, string, number, true, false or null)',
    )
    expect(messageOf("{'key': 'a'}")).toBe(
      `body: is not valid JSON: unexpected "'" at position 1 (expected a property name in double quotes, or '}')`,
    )
    expect(messageOf('{"key" "a"}')).toBe(
      "body: is not valid JSON: unexpected '\"' at position 7 (expected ':' after the property name)",
    )
    expect(messageOf('{"a":1 "b":2}')).toBe(
      "body: is not valid JSON: unexpected '\"' at position 7 (expected ',' or '}')",
    )
    expect(messageOf('[1,2')).toBe(
      "body: is not valid JSON: unexpected end of body at position 4 (expected ',' or ']')",
    )
    expect(messageOf('{"a":1}x')).toBe(
      "body: is not valid JSON: unexpected 'x' at position 7 (expected the end of the body)",
    )
    expect(messageOf('{"a":tru}')).toBe("body: is not valid JSON: unexpected '}' at position 8 (expected true)")
    expect(messageOf('{"a":"b\nc"}')).toBe(
      "body: is not valid JSON: unexpected '\\n' at position 7 (expected a character of the string: control characters must be escaped, e.g. \\n)",
    )
    expect(messageOf('\u0000')).toBe(
      "body: is not valid JSON: unexpected '\\u0000' at position 0 (expected a value: an object, array, string, number, true, false or null)",
    )
    expect(messageOf('"\\x"')).toMatch(/^body: is not valid JSON: unexpected 'x' at position 2 \(expected an escape/)
    expect(messageOf('-')).toBe('body: is not valid JSON: unexpected end of body at position 1 (expected a digit)')
    expect(messageOf('')).toBe('body: is empty; send a JSON object')
  })

  it('never quotes the body back beyond the one character at fault', () => {
    const key = 'sk_secret_secret_secret'
    expect(messageOf(`{"key":"${key}",}`)).not.toContain(key)
  })

  it('is told apart from a prototype-poisoning key, which is refused on its own terms', () => {
    expect(messageOf('{"key":"a","__proto__":{"x":1}}')).toBe(
      'body: has a __proto__ or constructor.prototype key, which is refused',
    )
    expect(messageOf('{"constructor":{"prototype":{}}}')).toBe(
      'body: has a __proto__ or constructor.prototype key, which is refused',
    )
    expect(parseJsonBody('\ufeff{"key":"a"}')).toEqual({ key: 'a' })
  })

  it('costs no stack however deep the body nests', () => {
    expect(jsonSyntaxProblem('['.repeat(1_000_000))).toBe(
      'unexpected end of body at position 1000000 (expected a value: an object, array, string, number, true, false or null)',
    )
  })

  it('agrees with JSON.parse on what is JSON', () => {
    const valid = (text: string) => {
      try {
        JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
        return true
      } catch {
        return false
      }
    }
    const jsonish = fc.stringMatching(/^[\s{}[\]",:0-9eE.+\-truefalsn\\u"abcdx]{0,24}$/)
    const mutated = fc
      .tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(), fc.string({ maxLength: 2 }), fc.nat({ max: 2 }))
      .map(([value, at, insert, drop]) => {
        const text = JSON.stringify(value, null, at % 2 === 0 ? undefined : 1)
        const cut = at % (text.length + 1)
        return text.slice(0, cut) + insert + text.slice(cut + drop)
      })
    fc.assert(
      fc.property(fc.oneof(jsonish, mutated, fc.string({ maxLength: 12 })), (text) => {
        expect(jsonSyntaxProblem(text) === undefined, text).toBe(valid(text))
      }),
      { seed: 13, numRuns: 20_000 },
    )
  })
})
