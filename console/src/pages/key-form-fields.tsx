import { Checkbox, Field, Select } from '../ui/fields.js'
import type { KeyForm, KeyFormProblems } from './key-form.js'

interface Props {
  form: KeyForm
  onChange: (form: KeyForm) => void
  problems: KeyFormProblems
  mode: 'create' | 'update'
}

/**
 * Every field of a key, for the create and edit forms: the common ones in view, the rest (expiry, credits and refill,
 * rate limit, roles, permissions) in a disclosure, opened at once when one of them has a problem.
 */
export function KeyFormFields({ form, onChange, problems, mode }: Props) {
  const field = <F extends keyof KeyForm>(name: F) => ({
    value: form[name] as string,
    onChange: (value: string) => onChange({ ...form, [name]: value }),
    problem: problems[name],
  })
  const advancedProblem = Object.keys(problems).some((name) => !['name', 'externalId', 'meta'].includes(name))
  return (
    <>
      <Field label="Name" {...field('name')} hint="Shown in lists; not secret" />
      <Field label="Owner (externalId)" {...field('externalId')} hint="Your user or customer id" />
      {mode === 'create' ? <Field label="Prefix" {...field('prefix')} hint="Letters and digits, e.g. sk" /> : null}
      <Field
        label="Meta (JSON object)"
        {...field('meta')}
        multiline
        placeholder='{"plan": "pro"}'
        hint="Returned with every verification"
      />
      <details open={advancedProblem || undefined}>
        <summary>Expiry, credits, rate limit, roles and permissions</summary>
        <div class="panel">
          <Field label="Expires" type="datetime-local" {...field('expires')} hint="Empty: never" />
          <Field
            label="Credits"
            type="number"
            min={mode === 'create' ? 1 : 0}
            {...field('remaining')}
            hint="Empty: unlimited"
          />
          <Select
            label="Refill"
            value={form.refillInterval}
            options={[
              ['', 'never'],
              ['daily', 'daily'],
              ['monthly', 'monthly'],
            ]}
            onChange={(refillInterval) => onChange({ ...form, refillInterval })}
          />
          {form.refillInterval ? (
            <Field label="Refill amount" type="number" min={1} {...field('refillAmount')} />
          ) : null}
          {form.refillInterval === 'monthly' ? (
            <Field label="Refill day" type="number" min={1} max={31} {...field('refillDay')} />
          ) : null}
          <Field label="Rate limit (calls)" type="number" min={1} {...field('ratelimitLimit')} hint="Empty: none" />
          <Field label="Rate limit window (ms)" type="number" min={1000} {...field('ratelimitDuration')} />
          <Checkbox
            label="Counted asynchronously (faster, approximate)"
            checked={form.ratelimitAsync}
            onChange={(ratelimitAsync) => onChange({ ...form, ratelimitAsync })}
          />
          <Field label="Roles" {...field('roles')} hint="Names, separated by commas" />
          <Field label="Permissions" {...field('permissions')} hint="Names, separated by commas" />
        </div>
      </details>
      <Checkbox label="Enabled" checked={form.enabled} onChange={(enabled) => onChange({ ...form, enabled })} />
    </>
  )
}
