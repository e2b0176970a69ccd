import { clipInput } from '../clip-input.js'
import type { PermissionQuery } from './permission-query.js'

/** Why a permission query's text does not parse: Unkey v2's wording, with the position (0-based) where it failed. */
export class PermissionQuerySyntaxError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PermissionQuerySyntaxError'
  }
}

type Token = { kind: 'name' | 'and' | 'or' | '(' | ')' | 'end'; text: string; at: number }

// A permission name's characters (PERMISSION_NAME's): `*` is a literal character, not a wildcard.
const NAME_CHAR = /[A-Za-z0-9_.:*\-/]/
const SPACE = /[ \t\r\n]/

function tokenize(text: string): Token[] {
  const tokens: Token[] = []
  let i = 0
  while (i < text.length) {
    const char = text[i]!
    if (SPACE.test(char)) {
      i++
    } else if (char === '(' || char === ')') {
      tokens.push({ kind: char, text: char, at: i++ })
    } else if (NAME_CHAR.test(char)) {
      const at = i
      while (i < text.length && NAME_CHAR.test(text[i]!)) i++
      const word = text.slice(at, i)
      // AND and OR in any case, as whole words only: `ANDROID` and `or.read` are names.
      const upper = word.toUpperCase()
      tokens.push({ kind: upper === 'AND' ? 'and' : upper === 'OR' ? 'or' : 'name', text: word, at })
    } else {
      // The whole character, never half of a surrogate pair.
      const shown = String.fromCodePoint(text.codePointAt(i)!)
      throw new PermissionQuerySyntaxError(
        `Invalid character '${shown}' found in query at position ${i}. Only letters, numbers, dots, underscores, hyphens, slashes, colons, asterisks, and parentheses are allowed.`,
      )
    }
  }
  tokens.push({ kind: 'end', text: '', at: text.length })
  return tokens
}

/**
 * v2 verifyKey's `permissions`: a query such as `a AND (b OR c)` (AND binds tighter than OR; the operators in any
 * case; parentheses group) → Keygate's PermissionQuery, with runs of one operator flattened into one list
 * (`a AND b AND c` → `{and: [a, b, c]}`). Throws PermissionQuerySyntaxError, worded as Unkey words it.
 */
export function parsePermissionQuery(text: string): PermissionQuery {
  const tokens = tokenize(text)
  let next = 0
  const peek = () => tokens[next]!

  const expression = (): PermissionQuery => {
    const terms = [conjunction()]
    while (peek().kind === 'or') {
      next++
      terms.push(conjunction())
    }
    return terms.length === 1 ? terms[0]! : { or: terms }
  }
  const conjunction = (): PermissionQuery => {
    const terms = [primary()]
    while (peek().kind === 'and') {
      next++
      terms.push(primary())
    }
    return terms.length === 1 ? terms[0]! : { and: terms }
  }
  const primary = (): PermissionQuery => {
    const token = tokens[next++]!
    if (token.kind === 'name') return token.text
    if (token.kind === '(') {
      if (peek().kind === ')') {
        throw new PermissionQuerySyntaxError(
          `Empty parentheses found at position ${peek().at}. Parentheses must contain at least one permission or expression.`,
        )
      }
      const inner = expression()
      if (peek().kind !== ')') {
        throw new PermissionQuerySyntaxError(
          `Missing closing parenthesis ')' at position ${peek().at}. Every opening parenthesis must have a matching closing parenthesis.`,
        )
      }
      next++
      return inner
    }
    if (token.kind === 'end') {
      throw new PermissionQuerySyntaxError(
        'Unexpected end of query. Expected a permission identifier or opening parenthesis.',
      )
    }
    throw new PermissionQuerySyntaxError(
      `Unexpected token '${clipInput(token.text)}' at position ${token.at}. Expected a permission identifier or opening parenthesis.`,
    )
  }

  if (peek().kind === 'end') {
    throw new PermissionQuerySyntaxError('Unexpected end of input. Please provide a valid permission query.')
  }
  const query = expression()
  if (peek().kind !== 'end') {
    throw new PermissionQuerySyntaxError(
      `Unexpected token '${clipInput(peek().text)}' at position ${peek().at}. The query appears to have extra content after a valid expression.`,
    )
  }
  return query
}
