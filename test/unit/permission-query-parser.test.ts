import { describe, expect, it } from 'vitest'
import { satisfies } from '../../shared/verification/permission-query.js'
import { parsePermissionQuery, PermissionQuerySyntaxError } from '../../shared/verification/permission-query-parser.js'

describe('v2 permission queries (text → PermissionQuery)', () => {
  it('reads a name, AND, OR, and flattens runs of one operator', () => {
    expect(parsePermissionQuery('documents.read')).toBe('documents.read')
    expect(parsePermissionQuery('a AND b AND c')).toEqual({ and: ['a', 'b', 'c'] })
    expect(parsePermissionQuery('a OR b OR c')).toEqual({ or: ['a', 'b', 'c'] })
  })

  it('binds AND tighter than OR, and parentheses tighter than both', () => {
    expect(parsePermissionQuery('a OR b AND c')).toEqual({ or: ['a', { and: ['b', 'c'] }] })
    expect(parsePermissionQuery('a AND b OR c')).toEqual({ or: [{ and: ['a', 'b'] }, 'c'] })
    expect(parsePermissionQuery('(a OR b) AND c')).toEqual({ and: [{ or: ['a', 'b'] }, 'c'] })
    expect(parsePermissionQuery('((a))')).toBe('a')
  })

  it('takes the operators in any case, as whole words only, and any whitespace', () => {
    expect(parsePermissionQuery('a and b Or c')).toEqual({ or: [{ and: ['a', 'b'] }, 'c'] })
    expect(parsePermissionQuery('ANDROID.read AND or.write')).toEqual({ and: ['ANDROID.read', 'or.write'] })
    expect(parsePermissionQuery(' \ta\nAND\r\nb ')).toEqual({ and: ['a', 'b'] })
  })

  it('reads every character of a permission name, `*` as itself', () => {
    const name = 'system:admin:*_v2-test/read.all'
    expect(parsePermissionQuery(name)).toBe(name)
    expect(satisfies(['api.*'], parsePermissionQuery('api.* OR api.edit'))).toBe(true)
    expect(satisfies(['api.read'], parsePermissionQuery('api.*'))).toBe(false)
  })

  it('evaluates as written', () => {
    const granted = ['a', 'b']
    const holds = (text: string) => satisfies(granted, parsePermissionQuery(text))
    expect(holds('a AND b')).toBe(true)
    expect(holds('a AND c')).toBe(false)
    expect(holds('c OR a AND b')).toBe(true)
    expect(holds('(c OR a) AND d')).toBe(false)
  })

  it('reads long queries (Unkey: up to 1000 characters) without nesting them deeply', () => {
    const names = Array.from({ length: 120 }, (_, i) => `p${i}`)
    expect(parsePermissionQuery(names.join(' AND '))).toEqual({ and: names })
    const deep = `${'('.repeat(300)}a${')'.repeat(300)}`
    expect(parsePermissionQuery(deep)).toBe('a')
  })

  it('refuses what does not parse, saying where, in Unkey’s words', () => {
    const cases: [string, string][] = [
      ['permission_1 AND', 'Unexpected end of query. Expected a permission identifier or opening parenthesis.'],
      [
        '(permission_1 AND permission_2',
        "Missing closing parenthesis ')' at position 30. Every opening parenthesis must have a matching closing parenthesis.",
      ],
      [
        'permission_1 AND ()',
        'Empty parentheses found at position 18. Parentheses must contain at least one permission or expression.',
      ],
      [
        'AND permission_1',
        "Unexpected token 'AND' at position 0. Expected a permission identifier or opening parenthesis.",
      ],
      ['a b', "Unexpected token 'b' at position 2. The query appears to have extra content after a valid expression."],
      ['a)', "Unexpected token ')' at position 1. The query appears to have extra content after a valid expression."],
      ['   ', 'Unexpected end of input. Please provide a valid permission query.'],
      [
        'a AND b$',
        "Invalid character '$' found in query at position 7. Only letters, numbers, dots, underscores, hyphens, slashes, colons, asterisks, and parentheses are allowed.",
      ],
      ['a OR 😀', "Invalid character '😀' found in query at position 5."],
    ]
    for (const [text, message] of cases) {
      let thrown: unknown
      try {
        parsePermissionQuery(text)
      } catch (err) {
        thrown = err
      }
      expect(thrown, text).toBeInstanceOf(PermissionQuerySyntaxError)
      expect((thrown as Error).message, text).toContain(message)
    }
  })

  it('quotes at most the start of a long token', () => {
    const long = `a ${'b'.repeat(500)}`
    expect(() => parsePermissionQuery(long)).toThrow(/'b{60}…' at position 2/)
  })
})
