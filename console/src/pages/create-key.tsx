import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { ErrorNote } from '../ui/page.js'
import { bodyOf, EMPTY_KEY_FORM, type KeyFormProblems } from './key-form.js'
import { KeyFormFields } from './key-form-fields.js'

/** The form that makes a key of the api (keys.createKey) with any of its fields; the key itself goes to onCreated. */
export function CreateKey(props: {
  api: KeygateApi
  apiId: string
  onCreated: (created: { keyId: string; key: string }) => void
}) {
  const [form, setForm] = useState(EMPTY_KEY_FORM)
  const [problems, setProblems] = useState<KeyFormProblems>({})
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const { body, problems: found } = bodyOf(form, 'create')
    setProblems(found)
    setError(undefined)
    if (Object.keys(found).length > 0) return
    setBusy(true)
    try {
      const created = await props.api.post<{ keyId: string; key: string }>('keys.createKey', {
        apiId: props.apiId,
        ...body,
      })
      setForm(EMPTY_KEY_FORM)
      props.onCreated(created)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <form aria-labelledby="create-key-title" onSubmit={(event) => void submit(event)}>
        <KeyFormFields form={form} onChange={setForm} problems={problems} mode="create" />
        <button type="submit" disabled={busy}>
          Create key
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
