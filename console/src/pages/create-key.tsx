import { useState } from 'preact/hooks'
import { describeError, type KeygateApi } from '../api.js'
import type { NewKey } from '../types.js'
import { KeyFormSection } from '../ui/key-form-section.js'
import { bodyOf, EMPTY_KEY_FORM, type KeyFormProblems } from './key-form.js'
import { KeyFormFields } from './key-form-fields.js'

/** The form that makes a key of the api (keys.createKey) with any of its fields; the key itself goes to onCreated. */
export function CreateKey(props: { api: KeygateApi; apiId: string; onCreated: (created: NewKey) => void }) {
  const [form, setForm] = useState(EMPTY_KEY_FORM)
  const [problems, setProblems] = useState<KeyFormProblems>({})
  const write = async () => {
    const { body, problems: found } = bodyOf(form, 'create')
    setProblems(found)
    if (Object.keys(found).length > 0) return
    const created = await props.api.post('keys.createKey', {
      apiId: props.apiId,
      ...body,
    })
    setForm(EMPTY_KEY_FORM)
    props.onCreated(created)
  }
  return (
    <KeyFormSection mode="create" write={write} describeError={describeError}>
      <KeyFormFields form={form} onChange={setForm} problems={problems} mode="create" />
    </KeyFormSection>
  )
}
