import type { IContainer } from 'kubernetes-models/v1/Container'

/**
 * What the repository's examples leave where only the user knows the value (`api_REPLACE_ME`: the README has it
 * replaced with `sed` before applying). Applied as it is, the value means nothing.
 */
export const PLACEHOLDER = 'REPLACE_ME'

const WHAT_TO_SET: Record<string, string> = {
  AUTHORIZE_API_ID: "your api's id (the apiId apis.createApi answered)",
}

/**
 * The docs shorten ids with an ellipsis (`api_1Ch…`): a value holding one was pasted from them, never a real id.
 * Not a placeholder: a template never holds one, so it is a problem even there.
 */
const ELLIPSIS = '…'

/** A container's env values and args that were pasted from the docs' shortened examples. */
export function ellipsisProblems(container: IContainer): string[] {
  const values = [
    ...(container.env ?? []).flatMap((variable) =>
      variable.value === undefined ? [] : [{ what: `env ${variable.name}`, value: variable.value }],
    ),
    ...[...(container.command ?? []), ...(container.args ?? [])].map((arg) => ({ what: 'argument', value: arg })),
  ]
  return values
    .filter(({ value }) => value.includes(ELLIPSIS))
    .map(
      ({ what, value }) =>
        `${what} ${JSON.stringify(value)} holds '${ELLIPSIS}', a shortened value copied from the docs: put the whole value`,
    )
}

/** A container's env values and args that still hold the placeholder. */
export function placeholderProblems(container: IContainer): string[] {
  const problems: string[] = []
  for (const variable of container.env ?? []) {
    if (!variable.value?.includes(PLACEHOLDER)) continue
    const what = WHAT_TO_SET[variable.name] ?? 'its real value'
    problems.push(
      `env ${variable.name} is still the placeholder ${JSON.stringify(variable.value)}: set it to ${what} before applying`,
    )
  }
  for (const arg of [...(container.command ?? []), ...(container.args ?? [])]) {
    if (arg.includes(PLACEHOLDER))
      problems.push(`${JSON.stringify(arg)} still holds a placeholder: replace it before applying`)
  }
  return problems
}
