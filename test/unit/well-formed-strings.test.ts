import fc from 'fast-check'
import secureJson from 'secure-json-parse'
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

// Halves of pairs alone and together, a pair, other text, and the escape's own characters as text.
const unit = fc.constantFrom('a', 'é', '\ud83d', '\ude00', '\udbff', '\udc00', '😀', '\\', 'u', 'd8', 'D8', 'DC')
const text = fc.array(unit, { maxLength: 4 }).map((units) => units.join(''))
const body = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.array(tie('value'), { maxLength: 3 }), tie('object')),
  object: fc.dictionary(text, tie('value'), { maxKeys: 3 }),
})).value

const HEX_CASES = {
  lower: (hex: string) => hex.toLowerCase(),
  upper: (hex: string) => hex.toUpperCase(),
  mixed: (hex: string) => [...hex].map((digit, i) => (i % 2 ? digit.toUpperCase() : digit.toLowerCase())).join(''),
}

/**
 * JSON text as an encoder that keeps to ASCII writes it (Python's json.dumps, ensure_ascii): every character beyond
 * ASCII as its `\u` escape, a pair as two, in the hex case given. An escaped backslash stays as it is (`\\u…` is text).
 */
const asciiJson = (value: unknown, hexCase: (hex: string) => string): string =>
  JSON.stringify(value)
    .replace(/[^ -~]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\\\\|\\u([0-9a-f]{4})/g, (escape, hex?: string) => (hex === undefined ? escape : `\\u${hexCase(hex)}`))

describe('strings that are not well-formed Unicode in a body', () => {
  it('are refused exactly when the body holds one, as a value or a property name, at any depth', () => {
    fc.assert(
      fc.property(body, (value) => {
        const problem = refusal(JSON.stringify(value))
        expect(problem === undefined).toBe(allStrings(value).every(wellFormed))
        if (problem) expect(problem).toMatch(/not well-formed Unicode/)
      }),
      { seed: 70, numRuns: 1_000 },
    )
  })

  it('are refused exactly when the body holds one, whatever the case of its escapes, a pair escaped as two', () => {
    fc.assert(
      fc.property(body, fc.constantFrom(...Object.values(HEX_CASES)), (value, hexCase) => {
        const sent = asciiJson(value, hexCase)
        expect(sent).toMatch(/^[ -~]*$/)
        const problem = refusal(sent)
        expect(problem === undefined, sent).toBe(allStrings(JSON.parse(sent)).every(wellFormed))
      }),
      { seed: 70, numRuns: 1_000 },
    )
  })

  it('reads escapes in any case, and an escaped backslash before u as text', () => {
    for (const refused of [
      String.raw`{"a":"\uD800"}`,
      String.raw`{"a":"\uDbFf"}`,
      String.raw`{"a":"x\uDC00"}`,
      String.raw`{"a":"\uDFFF\uD800"}`,
      String.raw`{"a":"\uD83D\u0041"}`,
      String.raw`{"a":"\\\uD800"}`,
      String.raw`{"a":"\uD83D\\uDE00"}`,
      String.raw`{"a":["ok",{"\uDE00":1}]}`,
    ])
      expect(refusal(refused), refused).toMatch(/not well-formed Unicode/)
    for (const taken of [
      String.raw`{"a":"\uD83D\uDE00"}`,
      String.raw`{"a":"\ud83D\uDe00"}`,
      String.raw`{"a":"\uDBFF\uDFFF"}`,
      String.raw`{"a":"\\uD800"}`,
      String.raw`{"a":"\\\\uDC00"}`,
      String.raw`{"\uD83D\uDE00":"\u00e9\u20AC"}`,
      // Text not decoded from UTF-8 may hold a half as is: beside its other half escaped, it makes a pair.
      '{"a":"\\uD83D\uDE00","b":"\uD83D\\uDE00"}',
    ])
      expect(refusal(taken), taken).toBeUndefined()
    expect(refusal(String.raw`{"meta":{"notes":["fine","x\uDFFF"]}}`)).toMatch(/^meta\.notes\.1: /)
    expect(refusal(String.raw`{"meta":{"ok":1,"\uD800":2}}`)).toMatch(/^meta: has a property name that/)
  })

  it('costs about what parsing costs, however many escaped pairs a body holds', () => {
    // Timed against the parse of the same text, alternately, the fastest of several runs each: a ratio, so that a
    // loaded machine slows both alike. The check with the parse costs about twice the parse alone (up to 2.3 times on
    // a loaded machine); checking the parsed values instead took 4 to 10 times the parse.
    const values = 450_000
    const pairs = Array.from({ length: values / 4 }, () => '"\\uD83D\\uDE00"').join(',')
    for (const sent of [
      `{"key":"sk_x","tags":["\\ud83d\\ude00"${',0'.repeat(values)}]}`,
      `{"key":"sk_x","tags":[${pairs}]}`,
    ]) {
      let checked = Infinity
      let parsed = Infinity
      for (let run = 0; run < 15; run++) {
        let started = performance.now()
        parseJsonBody(sent)
        checked = Math.min(checked, performance.now() - started)
        started = performance.now()
        secureJson.parse(sent)
        parsed = Math.min(parsed, performance.now() - started)
      }
      expect(checked, `${checked} ms checked, ${parsed} ms parsed`).toBeLessThan(parsed * 3)
    }
  })

  it('walks a body nested 200,000 levels deep without the stack, naming a clipped path', () => {
    const deep = `${'['.repeat(200_000)}"\\udc00"${']'.repeat(200_000)}`
    const problem = refusal(deep)!
    expect(problem).toMatch(/^0\.0\.0\.[0.]*…: is not well-formed Unicode/)
    expect(problem.length).toBeLessThan(400)
  })
})
