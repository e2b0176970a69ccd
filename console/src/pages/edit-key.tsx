import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { Key } from '../types.js'
import { ErrorNote } from '../ui/page.js'
import { changesOf, formOf, type KeyFormProblems } from './key-form.js'
import { KeyFormFields } from './key-form-fields.js'

/**
 * Editing a key (keys.updateKey): every field it holds, a cleared field cleared. Only what the admin changed is sent,
 * compared with the key as the form was filled: the key may change meanwhile (disabled from its page).
 */
export function EditKey(props: { api: KeygateApi; keyRecord: Key; onSaved: (changed: boolean) => void }) {
  const [loaded] = useState(() => formOf(props.keyRecord))
  const [form, setForm] = useState(loaded)
  const [problems, setProblems] = useState<KeyFormProblems>({})
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    const { body, problems: found } = changesOf(loaded, form)
    setProblems(found)
    setError(undefined)
    if (Object.keys(found).length > 0 || busy) return
    if (Object.keys(body).length === 0) return props.onSaved(false)
    setBusy(true)
    try {
      await props.api.post('keys.updateKey', { keyId: props.keyRecord.id, ...body })
      props.onSaved(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="edit-key-title">
      <h2 id="edit-key-title">Edit the key</h2>
      <form aria-labelledby="edit-key-title" onSubmit={(event) => void submit(event)}>
        <KeyFormFields form={form} onChange={setForm} problems={problems} mode="update" />
        <button type="submit" disabled={busy}>
          Save changes
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
