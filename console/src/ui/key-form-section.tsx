import type { ComponentChildren } from 'preact'
import { ErrorWords } from './error-words.js'
import { useSubmit } from './use-submit.js'

/** The words of each use: a key made (the console's and the portal's) or a key's fields changed (the console's). */
const MODES = {
  create: { title: 'Create a key', submitLabel: 'Create key' },
  edit: { title: 'Edit the key', submitLabel: 'Save changes' },
} as const

/**
 * The form that makes or edits a key, in a section named by its heading: the page's fields, the submit button
 * (disabled while the call runs) and the call's error in words. Which fields, and the call, are the page's: `write`
 * checks them, makes the call and says what it did, or throws.
 */
export function KeyFormSection(props: {
  mode: keyof typeof MODES
  write: () => Promise<void>
  describeError: (error: unknown) => string
  children: ComponentChildren
}) {
  const { title, submitLabel } = MODES[props.mode]
  const titleId = `${props.mode}-key-title`
  const submitting = useSubmit(props.write)
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>{title}</h2>
      <form aria-labelledby={titleId} onSubmit={submitting.submit}>
        {props.children}
        <button type="submit" disabled={submitting.busy}>
          {submitLabel}
        </button>
        <ErrorWords error={submitting.error} describe={props.describeError} />
      </form>
    </section>
  )
}
