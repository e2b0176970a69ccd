import { useState } from 'preact/hooks'
import { Field, Select } from '../../console/src/ui/fields.js'
import { ErrorNote } from './notices.js'
import type { PortalApi } from './portal-api.js'
import type { NewKey, Session } from './types.js'

/**
 * Making a key (portal.createKey): an optional name, and the api it is for when the session offers several (the
 * server needs it named then). The key itself goes to onCreated, to be shown once.
 */
export function CreateKeyForm(props: { api: PortalApi; apis: Session['apis']; onCreated: (made: NewKey) => void }) {
  const { apis } = props
  const [name, setName] = useState('')
  const [apiId, setApiId] = useState(apis[0]?.id ?? '')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    setBusy(true)
    setError(undefined)
    try {
      const trimmed = name.trim()
      const { data } = await props.api.call<NewKey>('createKey', {
        ...(apis.length > 1 ? { apiId } : {}),
        ...(trimmed ? { name: trimmed } : {}),
      })
      setName('')
      props.onCreated(data)
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
        <Field label="Name" value={name} onChange={setName} hint="Optional: what you will use it for." />
        {apis.length > 1 ? (
          <Select
            label="For"
            value={apiId}
            options={apis.map((entry) => [entry.id, entry.name] as const)}
            onChange={setApiId}
          />
        ) : null}
        <button type="submit" disabled={busy}>
          Create key
        </button>
      </form>
      <ErrorNote error={error} />
    </section>
  )
}
