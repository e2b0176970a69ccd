import { createContext } from 'preact'

/**
 * A failed call, said in words and announced as it appears. Each page says its own API's errors (`describe`): the
 * console's a root key's, the portal's a session's.
 */
export function ErrorWords(props: { error: unknown; describe: (error: unknown) => string }) {
  if (props.error === undefined || props.error === null) return null
  return (
    <p role="alert" class="error">
      {props.describe(props.error)}
    </p>
  )
}

/**
 * How the page around ui/ says its API's failed calls in words, for the error notes of ui/'s forms, tables and
 * dialogs: each page provides its own where it renders its app (the console a root key's, console/src/main.tsx), so
 * that ui/ knows no API client. Without one, an error is said by its own text.
 */
export const DescribeError = createContext<(error: unknown) => string>(
  (error) => `Something went wrong: ${String(error)}`,
)
