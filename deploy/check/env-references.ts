/**
 * Kubernetes' dependent environment variables: in an env value, `$(NAME)` is replaced by the value of a
 * variable listed earlier in the same container; any other reference stays as written, and `$$` is a `$`.
 */
const REFERENCE = /\$\$|\$\(([^()]*)\)/g

/** The names a value refers to as `$(NAME)`, escapes (`$$(NAME)`) left out. */
export function referencesIn(value: string): string[] {
  return [...value.matchAll(REFERENCE)].flatMap((match) => (match[1] === undefined ? [] : [match[1]]))
}

/** A variable's value as the container will see it; `unknown` when it comes from a Secret or ConfigMap. */
export interface EnvValue {
  text: string
  unknown: boolean
}

/**
 * Expands `value` as the kubelet does, against the variables defined before it. A reference to a variable
 * whose value is unknown here becomes `placeholder` and makes the result unknown.
 */
export function expand(value: string, defined: ReadonlyMap<string, EnvValue>, placeholder: string): EnvValue {
  let unknown = false
  const text = value.replace(REFERENCE, (match, name: string | undefined) => {
    if (name === undefined) return '$'
    const found = defined.get(name)
    if (!found) return match
    unknown ||= found.unknown
    return found.unknown ? placeholder : found.text
  })
  return { text, unknown }
}

/**
 * References Kubernetes would leave unexpanded: to a variable listed after the one that uses it, or to one the
 * container does not define. The value then holds the text `$(NAME)` (a password that never matches, say).
 */
export function referenceOrderProblems(variables: readonly { name: string; value?: string }[]): string[] {
  const problems: string[] = []
  const defined = new Set<string>()
  for (const { name, value } of variables) {
    for (const reference of referencesIn(value ?? '')) {
      if (defined.has(reference)) continue
      const later = variables.some((other) => other.name === reference)
      problems.push(
        `env ${name} uses $(${reference}), ${later ? 'listed after it' : 'which the container does not define'}: Kubernetes leaves the text $(${reference}) in its value${later ? ' (list it earlier)' : ''}`,
      )
    }
    defined.add(name)
  }
  return problems
}
