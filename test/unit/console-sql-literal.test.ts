import { query } from 'chdb'
import { describe, expect, it } from 'vitest'
import { SqlLiteralError, sqlString } from '../../console/src/usage/sql-literal.js'
import { tagFilterOf } from '../../console/src/usage/tag-filter.js'

/**
 * The one way the console writes a value into the SQL it sends the analytics route (which takes no query
 * parameters): a ClickHouse string literal that reads back as the value, whatever the value holds.
 */
describe("the console's SQL string literal", () => {
  it('quotes plain text as it is', () => {
    expect(sqlString('path=/v1/users')).toBe("'path=/v1/users'")
    expect(sqlString('')).toBe("''")
  })

  it('escapes the single quote, so that text cannot end the literal', () => {
    expect(sqlString("it's")).toBe("'it\\'s'")
    expect(sqlString("') OR 1=1 --")).toBe("'\\') OR 1=1 --'")
  })

  it('escapes the backslash first, so that an escaped quote is not unescaped by one typed before it', () => {
    expect(sqlString('a\\b')).toBe("'a\\\\b'")
    // A backslash then a quote: both escaped, four characters for two (a naive quote escape would give \\', which
    // ClickHouse reads as a backslash and the literal's end).
    expect(sqlString("\\'")).toBe("'\\\\\\''")
    expect(sqlString('\\')).toBe("'\\\\'")
    // Text that looks like an escape stays text: a backslash and an n, not a line break.
    expect(sqlString('\\n')).toBe("'\\\\n'")
  })

  it('keeps unicode as it is: accents, other scripts, emoji (surrogate pairs)', () => {
    expect(sqlString('café ☃ 日本 😀')).toBe("'café ☃ 日本 😀'")
    expect(sqlString('\u2028')).toBe("'\u2028'")
  })

  it('refuses control characters and lone surrogates instead of writing them', () => {
    for (const text of [
      'a\nb',
      'a\rb',
      'tab\there',
      'nul\u0000',
      '\u001b[31m',
      'del\u007f',
      'c1\u0085',
      '\ud800',
      'x\udfff',
    ])
      expect(() => sqlString(text), JSON.stringify(text)).toThrow(SqlLiteralError)
  })

  it('reads back in ClickHouse as the text it was made of, and ends where it should', () => {
    // chDB is ClickHouse's own parser: each literal is one value, the text exactly, and nothing after it runs.
    const texts = [
      "a'b",
      "\\'",
      "\\\\''",
      "'; SELECT 1; --",
      "') OR ('1'='1",
      '{tag:String}',
      "😀'\\",
      'x\\n',
      '/* -- */',
      'café ☃ 日本',
    ]
    const answer = query(`SELECT [${texts.map(sqlString).join(', ')}] AS texts`, 'JSONEachRow')
    expect((JSON.parse(answer) as { texts: string[] }).texts).toEqual(texts)
  })
})

describe("a usage chart's tag filter", () => {
  it('is none for a blank field, and the tag without its surrounding spaces', () => {
    expect(tagFilterOf('')).toEqual({})
    expect(tagFilterOf('   ')).toEqual({})
    expect(tagFilterOf("  it's beta ")).toEqual({ tag: "it's beta" })
  })

  it('says what is wrong with a tag no verification carries, instead of querying it', () => {
    expect(tagFilterOf('a\tb').problem).toMatch(/control character/)
    expect(tagFilterOf('x'.repeat(128))).toEqual({ tag: 'x'.repeat(128) })
    expect(tagFilterOf('x'.repeat(129)).problem).toBe('A tag is at most 128 characters.')
  })
})
