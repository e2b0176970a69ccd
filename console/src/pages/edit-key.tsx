import { useState } from 'preact/hooks'
import { describeError, type KeygateApi } from '../api.js'
import type { Key } from '../types.js'
import { KeyFormSection } from '../ui/key-form-section.js'
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
  const write = async () => {
    const { body, problems: found } = changesOf(loaded, form)
    setProblems(found)
    if (Object.keys(found).length > 0) return
    if (Object.keys(body).length === 0) return props.onSaved(false)
    await props.api.post('keys.updateKey', { keyId: props.keyRecord.id, ...body })
    props.onSaved(true)
  }
  return (
    <KeyFormSection mode="edit" write={write} describeError={describeError}>
      <KeyFormFields form={form} onChange={setForm} problems={problems} mode="update" />
    </KeyFormSection>
  )
}
