import type { ComponentChildren } from 'preact'
import { useId } from 'preact/hooks'
import { ErrorNote } from './page.js'
import type { Submitting } from './use-submit.js'

/** A form that writes: its fields, its submit button (disabled while the call runs), Cancel if given, the error. */
export function WriteForm(props: {
  /** The form's accessible name; or `labelledBy`, the id of the heading that names it. */
  label?: string
  labelledBy?: string
  submitLabel: string
  submitting: Submitting
  onCancel?: () => void
  children: ComponentChildren
}) {
  return (
    <form aria-label={props.label} aria-labelledby={props.labelledBy} onSubmit={props.submitting.submit}>
      {props.children}
      <button type="submit" disabled={props.submitting.busy}>
        {props.submitLabel}
      </button>
      {props.onCancel ? (
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      ) : null}
      <ErrorNote error={props.submitting.error} />
    </form>
  )
}

/** An edit of one record in a section of its own, named by its heading: the fields, Save and Cancel. */
export function EditSection(props: {
  title: string
  submitLabel: string
  submitting: Submitting
  onCancel: () => void
  children: ComponentChildren
}) {
  const id = `${useId()}-title`
  return (
    <section aria-labelledby={id}>
      <h2 id={id}>{props.title}</h2>
      <WriteForm
        labelledBy={id}
        submitLabel={props.submitLabel}
        submitting={props.submitting}
        onCancel={props.onCancel}
      >
        {props.children}
      </WriteForm>
    </section>
  )
}
