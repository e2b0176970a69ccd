import { clipInput } from '../clip-input.js'
import { invalid } from '../errors/errors.js'

/** A surrogate that is not half of a pair: with the `u` flag a pair is one code point, and only a lone half is Cs. */
const LONE_SURROGATE = /\p{Cs}/u

const PROBLEM = 'it holds a lone surrogate (an escape from \\uD800 to \\uDFFF that is not half of a pair)'

const BACKSLASH = 0x5c
const LETTER_U = 0x75

/** The code unit a `\uXXXX` escape starting at `at` (its backslash) writes, any case of hex; -1 if there is none. */
function escapedUnit(text: string, at: number): number {
  if (text.charCodeAt(at) !== BACKSLASH || text.charCodeAt(at + 1) !== LETTER_U) return -1
  let unit = 0
  for (let i = at + 2; i < at + 6; i++) {
    const c = text.charCodeAt(i)
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : (c | 0x20) >= 0x61 && (c | 0x20) <= 0x66 ? (c | 0x20) - 0x57 : -1
    if (digit < 0) return -1
    unit = unit * 16 + digit
  }
  return unit
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff

/**
 * Whether JSON text, already parsed without error, writes a lone surrogate in some string: a `\uD800`–`\uDBFF` escape
 * not followed by a `\uDC00`–`\uDFFF`, or a low half alone. A body is decoded from UTF-8, which cannot hold a lone
 * surrogate (the decoder makes U+FFFD of one), so only an escape can write one; a half escaped beside its other half
 * written as is still makes a pair, as JSON.parse reads it. In valid JSON every backslash starts an escape, so the
 * text is read escape by escape, from one backslash to the next (`\\u…` is an escaped backslash, then text): no
 * allocation, and one search for a body without a backslash.
 */
function writesLoneSurrogate(text: string): boolean {
  for (let at = text.indexOf('\\'); at !== -1;) {
    const unit = escapedUnit(text, at)
    let next = at + 2
    if (isHigh(unit)) {
      if (isLow(escapedUnit(text, at + 6))) next = at + 12
      else if (isLow(text.charCodeAt(at + 6))) next = at + 7
      else return true
    } else if (isLow(unit)) {
      if (!isHigh(text.charCodeAt(at - 1))) return true
      next = at + 6
    } else if (unit !== -1) {
      next = at + 6
    }
    at = text.indexOf('\\', next)
  }
  return false
}

/** An object or array being read, and the way to it (a path is built only for the one reported). */
interface Frame {
  container: object
  /** The object's property names (undefined for an array). */
  names: string[] | undefined
  next: number
  name: string
  parent: Frame | undefined
}

/** The field's path (`meta.note`), clipped: a body nested thousands deep is not echoed back whole. */
const pathOf = (frame: Frame, last: string | undefined): string => {
  const names = last === undefined ? [] : [clipInput(last)]
  for (let step: Frame | undefined = frame; step?.parent; step = step.parent) names.push(clipInput(step.name))
  return clipInput(names.reverse().join('.'), MAX_PATH)
}
const MAX_PATH = 200

/** The name of a frame's child `index`: its property name, or an array's index (made only when it is needed). */
const nameAt = (names: string[] | undefined, index: number): string => names?.[index] ?? String(index)

const frameOf = (container: object, name: string, parent: Frame | undefined): Frame => ({
  container,
  names: Array.isArray(container) ? undefined : Object.keys(container),
  next: 0,
  name,
  parent,
})

/**
 * The 400 naming where a parsed body holds its lone surrogate: a value's field (`meta.note`, `tags.0`), or for a
 * property name the object holding it (`body` at the top), as the name itself cannot be shown. Iterative, one frame
 * per object or array (none per value): a body nested a million levels deep costs a loop, never the stack.
 */
function refusalOf(body: unknown): Error {
  const found = (at: string | undefined, problem: string) => invalid(at || 'body', problem)
  if (typeof body === 'string' || typeof body !== 'object' || body === null)
    return found(undefined, `is not well-formed Unicode: ${PROBLEM}`)
  for (let frame: Frame | undefined = frameOf(body, 'body', undefined); frame !== undefined;) {
    const { container, names } = frame
    if (names !== undefined && frame.next === 0 && names.some((name) => LONE_SURROGATE.test(name)))
      return found(pathOf(frame, undefined), `has a property name that is not well-formed Unicode: ${PROBLEM}`)
    const length = names === undefined ? (container as unknown[]).length : names.length
    let child: Frame | undefined
    while (child === undefined && frame.next < length) {
      const index = frame.next++
      const value =
        names === undefined ? (container as unknown[])[index] : (container as Record<string, unknown>)[names[index]!]
      if (typeof value === 'string') {
        if (LONE_SURROGATE.test(value))
          return found(pathOf(frame, nameAt(names, index)), `is not well-formed Unicode: ${PROBLEM}`)
      } else if (typeof value === 'object' && value !== null) {
        child = frameOf(value, nameAt(names, index), frame)
      }
    }
    frame = child ?? frame.parent
  }
  return found(undefined, `is not well-formed Unicode: ${PROBLEM}`)
}

/**
 * Refuses (400) a parsed JSON body holding a string, as a value or as a property name, that is not well-formed
 * Unicode: stored, it would break every JSON tool that reads it back. `text` is the body as sent; it alone decides, in
 * one pass over its escapes, and the parsed body is read only to name the field of a body refused.
 */
export function requireWellFormedStrings(text: string, body: unknown): void {
  if (writesLoneSurrogate(text)) throw refusalOf(body)
}
