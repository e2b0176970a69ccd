import { SqlLiteralError, sqlString } from './sql-literal.js'

/** The longest tag a verification carries (verifyKey's `tags`). */
export const MAX_TAG_LENGTH = 128

/**
 * A tag as typed into a chart's filter: none when the field is blank (surrounding spaces are not part of it), or the
 * problem to show under the field (too long to be a tag, or a character no SQL literal of the console holds).
 */
export function tagFilterOf(typed: string): { tag?: string; problem?: string } {
  const tag = typed.trim()
  if (!tag) return {}
  if (tag.length > MAX_TAG_LENGTH) return { problem: `A tag is at most ${MAX_TAG_LENGTH} characters.` }
  try {
    sqlString(tag)
  } catch (err) {
    if (err instanceof SqlLiteralError)
      return { problem: 'A tag cannot hold a line break, a tab or another control character.' }
    throw err
  }
  return { tag }
}
