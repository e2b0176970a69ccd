/** How much of a client's own text an error message quotes back: enough to recognise it, not a whole echo. */
export const QUOTED_INPUT_MAX = 60

/**
 * `text` as an error message quotes it: whole up to QUOTED_INPUT_MAX characters, else its start and '…'. Never
 * cuts a surrogate pair in two (a lone half would show as garbage, or break a strict JSON reader).
 */
export function clipInput(text: string, max = QUOTED_INPUT_MAX): string {
  if (text.length <= max) return text
  const end = /[\uD800-\uDBFF]/.test(text[max - 1]!) ? max - 1 : max
  return `${text.slice(0, end)}…`
}
