import { useId } from 'preact/hooks'
import { Checkbox, Field } from '../ui/fields.js'
import { EVENT_TYPES } from '../webhook-event-types.js'
import { withEventType, type EndpointForm } from './endpoint-form.js'

/** A webhook endpoint's fields, to create or edit it: URL, description, apis, and the event types as checkboxes. */
export function EndpointFormFields({ form, onChange }: { form: EndpointForm; onChange: (form: EndpointForm) => void }) {
  const hintId = `${useId()}-hint`
  return (
    <>
      <Field
        label="URL"
        type="url"
        required
        value={form.url}
        onChange={(url) => onChange({ ...form, url })}
        placeholder="https://example.com/keygate-events"
        hint="http or https; its host must have public addresses (unless the operator allows private ones)"
      />
      <Field
        label="Description"
        value={form.description}
        onChange={(description) => onChange({ ...form, description })}
        placeholder="billing service"
      />
      <Field
        label="Apis"
        value={form.apiIds}
        onChange={(apiIds) => onChange({ ...form, apiIds })}
        placeholder="api_…, api_…"
        hint="Api ids, separated by commas: only events about their keys are sent. Empty: every api's, and the identity and root-key events too. Your root key must read what the endpoint is sent."
      />
      <fieldset class="event-types" aria-describedby={hintId}>
        <legend>Event types</legend>
        <small id={hintId} class="hint">
          None checked: every type, those added later too, but the usage events (check them to receive them).
        </small>
        {EVENT_TYPES.map((type) => (
          <Checkbox
            key={type}
            label={type}
            checked={form.eventTypes.includes(type)}
            onChange={(on) => onChange({ ...form, eventTypes: withEventType(form.eventTypes, type, on) })}
          />
        ))}
      </fieldset>
    </>
  )
}
