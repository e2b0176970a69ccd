import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { WebhookEndpoint } from '../types.js'
import { ErrorNote } from '../ui/page.js'
import { changesOf, formOf } from './endpoint-form.js'
import { EndpointFormFields } from './endpoint-form-fields.js'

/**
 * Editing an endpoint (webhooks.updateEndpoint): its URL, description, apis and event types. Only what the admin
 * changed is sent, compared with the endpoint as the form was filled.
 */
export function EditEndpoint(props: {
  api: KeygateApi
  endpoint: WebhookEndpoint
  onSaved: (changed: boolean) => void
}) {
  const [loaded] = useState(() => formOf(props.endpoint))
  const [form, setForm] = useState(loaded)
  const [error, setError] = useState<unknown>()
  const [busy, setBusy] = useState(false)
  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const body = changesOf(loaded, form)
    if (Object.keys(body).length === 0) return props.onSaved(false)
    setBusy(true)
    setError(undefined)
    try {
      await props.api.post('webhooks.updateEndpoint', { endpointId: props.endpoint.endpointId, ...body })
      props.onSaved(true)
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <section aria-labelledby="edit-endpoint-title">
      <h2 id="edit-endpoint-title">Edit the endpoint</h2>
      <form aria-labelledby="edit-endpoint-title" onSubmit={(event) => void submit(event)}>
        <EndpointFormFields form={form} onChange={setForm} />
        <button type="submit" disabled={busy}>
          Save changes
        </button>
        <ErrorNote error={error} />
      </form>
    </section>
  )
}
