import type { ComponentChildren } from 'preact'
import { useState } from 'preact/hooks'
import { ErrorWords } from './error-words.js'
import { Select } from './fields.js'
import { useSubmit } from './use-submit.js'

/**
 * Replacing a secret (rerolling or rolling a key, rotating a webhook's signing secret): how long the old one goes on
 * working beside the new one, chosen from `graces` (each a value and its words), and the button that does it. The
 * call is the page's (`replace`, given the value chosen); the new secret is shown once by whoever gets it.
 *
 * In a page's section, the call's error is said after the button, as in the console's forms; in a dialog (`onCancel`
 * given: a Cancel button beside it), above the buttons, as in every dialog of both pages.
 */
export function ReplaceSecretForm<Grace extends string>(props: {
  /** The id of the heading that names the form; a dialog's form is named by the dialog. */
  labelledBy?: string
  /** What replacing does, said in the form (a section says it above the form). */
  intro?: ComponentChildren
  graceLabel: string
  graces: readonly (readonly [Grace, string])[]
  initialGrace: Grace
  submitLabel: string
  replace: (grace: Grace) => Promise<void>
  describeError: (error: unknown) => string
  onCancel?: () => void
}) {
  const [grace, setGrace] = useState<Grace>(props.initialGrace)
  const submitting = useSubmit(() => props.replace(grace))
  const error = <ErrorWords error={submitting.error} describe={props.describeError} />
  const submit = (
    <button type="submit" disabled={submitting.busy}>
      {props.submitLabel}
    </button>
  )
  const select = <Select label={props.graceLabel} value={grace} options={props.graces} onChange={setGrace} />
  if (!props.onCancel)
    return (
      <form aria-labelledby={props.labelledBy} onSubmit={submitting.submit}>
        {props.intro}
        {select}
        {submit}
        {error}
      </form>
    )
  return (
    <form method="dialog" class="dialog-form" aria-labelledby={props.labelledBy} onSubmit={submitting.submit}>
      {props.intro}
      {select}
      {error}
      <div class="actions">
        {submit}
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  )
}
