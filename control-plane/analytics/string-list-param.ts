/**
 * A list of strings as a tuple of `{name:String}` parameters for an IN, each set in `params`: a String parameter's
 * text is taken as it is by both engines, where an Array's would need escaping each engine does differently. An
 * empty list would match nothing, so it is refused: callers ask nothing instead.
 */
export function stringListParam(prefix: string, values: readonly string[], params: Record<string, string>): string {
  if (values.length === 0) throw new Error(`an empty list of ${prefix}s`)
  return `(${values
    .map((value, i) => {
      params[`${prefix}${i}`] = value
      return `{${prefix}${i}:String}`
    })
    .join(', ')})`
}
