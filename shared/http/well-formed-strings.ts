import { clipInput } from '../clip-input.js'
import { invalid } from '../errors.js'

/**
 * A `\u` escape of a surrogate (D800–DFFF). A body is decoded from UTF-8, which cannot hold a surrogate (the decoder
 * makes U+FFFD of one), so only such an escape can make JSON.parse produce a lone one: a body without it is not walked.
 */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F]/
/** A surrogate that is not half of a pair: with the `u` flag a pair is one code point, and only a lone half is Cs. */
const LONE_SURROGATE = /\p{Cs}/u

const PROBLEM = 'it holds a lone surrogate (an escape from \\uD800 to \\uDFFF that is not half of a pair)'

/** One value still to look at, with the way to it (its path is built only for the one reported). */
interface Pending {
  value: unknown
  name: string
  parent: Pending | undefined
}

/** The field's path (`meta.note`), clipped: a body nested thousands deep is not echoed back whole. */
const pathOf = (at: Pending): string => {
  const names: string[] = []
  for (let step: Pending | undefined = at; step?.parent; step = step.parent) names.push(clipInput(step.name))
  return clipInput(names.reverse().join('.'), MAX_PATH)
}
const MAX_PATH = 200

/**
 * Refuses (400) a parsed JSON body holding a string, as a value or as a property name, that is not well-formed
 * Unicode: stored, it would break every JSON tool that reads it back. The field is named (`meta.note`, `tags.0`); a
 * property name is reported at the object holding it (`body` at the top), as the name itself cannot be shown. `text`
 * is the body as sent: without a surrogate escape in it (almost every body) this costs one scan of it, no walk.
 * Iterative: a body nested a million levels deep costs a loop, never the stack.
 */
export function requireWellFormedStrings(text: string, body: unknown): void {
  if (!text.includes('\\u') || !SURROGATE_ESCAPE.test(text)) return
  const pending: Pending[] = [{ value: body, name: 'body', parent: undefined }]
  for (let at = pending.pop(); at !== undefined; at = pending.pop()) {
    const { value } = at
    if (typeof value === 'string') {
      if (LONE_SURROGATE.test(value)) throw invalid(pathOf(at) || 'body', `is not well-formed Unicode: ${PROBLEM}`)
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) pending.push({ value: value[i], name: String(i), parent: at })
    } else if (typeof value === 'object' && value !== null) {
      const names = Object.keys(value)
      if (names.some((name) => LONE_SURROGATE.test(name)))
        throw invalid(pathOf(at) || 'body', `has a property name that is not well-formed Unicode: ${PROBLEM}`)
      for (let i = names.length - 1; i >= 0; i--)
        pending.push({ value: (value as Record<string, unknown>)[names[i]!], name: names[i]!, parent: at })
    }
  }
}
