import { useState } from 'preact/hooks'
import { Field, Select } from '../../console/src/ui/fields.js'
import { KeyFormSection } from '../../console/src/ui/key-form-section.js'
import { describeError, type PortalApi } from './portal-api.js'
import type { NewKey, Session } from './types.js'

/**
 * Making a key (portal.createKey): an optional name, and the api it is for when the session offers several (the
 * server needs it named then). The key itself goes to onCreated, to be shown once.
 */
export function CreateKeyForm(props: { api: PortalApi; apis: Session['apis']; onCreated: (made: NewKey) => void }) {
  const { apis } = props
  const [name, setName] = useState('')
  const [apiId, setApiId] = useState(apis[0]?.id ?? '')
  const write = async () => {
    const trimmed = name.trim()
    const { data } = await props.api.call('createKey', {
      ...(apis.length > 1 ? { apiId } : {}),
      ...(trimmed ? { name: trimmed } : {}),
    })
    setName('')
    props.onCreated(data)
  }
  return (
    <KeyFormSection mode="create" write={write} describeError={describeError}>
      <Field label="Name" value={name} onChange={setName} hint="Optional: what you will use it for." />
      {apis.length > 1 ? (
        <Select
          label="For"
          value={apiId}
          options={apis.map((entry) => [entry.id, entry.name] as const)}
          onChange={setApiId}
        />
      ) : null}
    </KeyFormSection>
  )
}
