/**
 * Where a text stops being JSON, and what was expected there: `unexpected '}' at position 12 (expected a property
 * name in double quotes)`. Written out rather than read from V8's SyntaxError, whose wording changes between Node
 * lines and which quotes the whole input (a key, in verifyKey's body). Iterative: a body of a million `[` costs a
 * loop, never the stack. Agrees with JSON.parse on what is JSON (test/unit/json-syntax.test.ts).
 */
export function jsonSyntaxProblem(text: string): string | undefined {
  const stack: ('{' | '[')[] = []
  // A byte-order mark is skipped, as secure-json-parse does; positions still count from the text as sent.
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0
  const fail = (expected: string) =>
    `unexpected ${i < text.length ? quote(text[i]!) : 'end of body'} at position ${i} (expected ${expected})`
  const skipSpace = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++
  }
  const digits = () => {
    const start = i
    while (i < text.length && text[i]! >= '0' && text[i]! <= '9') i++
    return i > start
  }
  /** A string at i (its opening quote): the problem, or undefined with i past the closing quote. */
  const string = (): string | undefined => {
    for (i++; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c === 0x22) {
        i++
        return undefined
      }
      if (c < 0x20) return fail('a character of the string: control characters must be escaped, e.g. \\n')
      if (c !== 0x5c) continue
      i++
      if (i < text.length && '"\\/bfnrt'.includes(text[i]!)) continue
      if (text[i] !== 'u') return fail('an escape: \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\u followed by 4 hex digits')
      for (let n = 0; n < 4; n++) {
        i++
        if (!/^[0-9A-Fa-f]$/.test(text[i] ?? '')) return fail('a hex digit of a \\u escape')
      }
    }
    return fail('the closing " of the string')
  }
  /** A value other than an object or array at i: the problem, or undefined with i past it. */
  const scalar = (): string | undefined => {
    const c = text[i]
    if (c === '"') return string()
    if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) {
      if (c === '-') i++
      if (text[i] === '0') i++
      else if (!digits()) return fail('a digit')
      if (text[i] === '.') {
        i++
        if (!digits()) return fail('a digit after the decimal point')
      }
      if (text[i] === 'e' || text[i] === 'E') {
        i++
        if (text[i] === '+' || text[i] === '-') i++
        if (!digits()) return fail('a digit of the exponent')
      }
      return undefined
    }
    for (const word of ['true', 'false', 'null']) {
      if (c !== word[0]) continue
      for (const letter of word) {
        if (text[i] !== letter) return fail(word)
        i++
      }
      return undefined
    }
    return fail('a value: an object, array, string, number, true, false or null')
  }

  skipSpace()
  for (;;) {
    // A value is expected here.
    if (text[i] === '{' || text[i] === '[') {
      const open = text[i] as '{' | '['
      i++
      skipSpace()
      if (text[i] === (open === '{' ? '}' : ']')) i++
      else {
        stack.push(open)
        if (open === '{') {
          const problem = key(true)
          if (problem) return problem
        }
        continue
      }
    } else {
      const problem = scalar()
      if (problem) return problem
    }
    // After a value: a comma, the end of its container, or the end of the body.
    for (;;) {
      skipSpace()
      const inside = stack.at(-1)
      if (inside === undefined) return i < text.length ? fail('the end of the body') : undefined
      const close = inside === '{' ? '}' : ']'
      if (text[i] === close) {
        stack.pop()
        i++
        continue
      }
      if (text[i] !== ',') return fail(`',' or '${close}'`)
      i++
      skipSpace()
      if (inside === '{') {
        const problem = key(false)
        if (problem) return problem
      }
      break
    }
  }

  /** A property name and its colon, with i left at the value. */
  function key(first: boolean): string | undefined {
    if (text[i] !== '"')
      return fail(first ? "a property name in double quotes, or '}'" : 'a property name in double quotes')
    const problem = string()
    if (problem) return problem
    skipSpace()
    if (text[i] !== ':') return fail("':' after the property name")
    i++
    skipSpace()
    return undefined
  }
}

/** One character, shown safely: control characters and lone surrogates escaped as JSON escapes them. */
function quote(char: string): string {
  const shown = JSON.stringify(char).slice(1, -1)
  return char === "'" ? `"'"` : `'${shown === '\\"' ? '"' : shown}'`
}
