import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { Checkbox, Field } from '../ui/fields.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'

/** ratelimits.setOverride: an identifier's limit in a namespace (made on first use when named anew). */
export function OverrideForm(props: {
  api: KeygateApi
  namespace: string
  /** Absent when the namespace is fixed (its own page). */
  onNamespace?: (namespace: string) => void
  initial?: { identifier: string; limit: number; duration: number; async: boolean }
  onSaved: (namespace: string) => void
}) {
  const [identifier, setIdentifier] = useState(props.initial?.identifier ?? '')
  const [limit, setLimit] = useState(String(props.initial?.limit ?? ''))
  const [duration, setDuration] = useState(String(props.initial?.duration ?? 60000))
  const [async, setAsync] = useState(props.initial?.async ?? false)
  const submitting = useSubmit(async () => {
    await props.api.post('ratelimits.setOverride', {
      namespaceName: props.namespace.trim(),
      identifier: identifier.trim(),
      limit: Number(limit),
      duration: Number(duration),
      async,
    })
    props.onSaved(props.namespace.trim())
    if (!props.initial) {
      setIdentifier('')
      setLimit('')
    }
  })
  return (
    <WriteForm label="Set an override" submitLabel="Save override" submitting={submitting}>
      {props.onNamespace ? (
        <Field
          label="Namespace"
          value={props.namespace}
          onChange={props.onNamespace}
          required
          placeholder="email.outbound"
        />
      ) : null}
      <Field
        label="Identifier"
        value={identifier}
        onChange={setIdentifier}
        required
        hint="e.g. user_123, or a pattern with *"
      />
      <Field label="Limit (calls)" type="number" min={0} value={limit} onChange={setLimit} required />
      <Field label="Window (ms)" type="number" min={1000} value={duration} onChange={setDuration} required />
      <Checkbox label="Counted asynchronously" checked={async} onChange={setAsync} />
    </WriteForm>
  )
}
