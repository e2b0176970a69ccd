import { useId, useState } from 'preact/hooks'
import {
  USAGE_MEASURES,
  USAGE_PERIODS,
  type UsageMeasure,
  type UsagePeriod,
  type UsageThreshold,
} from '../generated/ui-shapes.js'
import { Field, Select } from '../ui/fields.js'
import { ErrorNote, StatusNote } from '../ui/page.js'
import { useSubmit } from '../ui/use-submit.js'
import { WriteForm } from '../ui/write-form.js'

const MEASURE_WORDS: Record<UsageMeasure, string> = {
  billable: 'billable verifications',
  credits: 'credits spent',
}
const PERIOD_WORDS: Record<UsagePeriod, string> = { day: 'UTC day', month: 'UTC month' }

/** A threshold in words: "100,000 billable verifications in a UTC month". */
export const thresholdWords = (threshold: UsageThreshold) =>
  `${threshold.value.toLocaleString('en-US')} ${MEASURE_WORDS[threshold.measure]} in a ${PERIOD_WORDS[threshold.period]}`

/**
 * An identity's or a key's usage thresholds: each listed with Remove, one added at a time. `save` writes the whole
 * list (identities.updateIdentity or keys.updateKey replace it) and the page reloads the record.
 */
export function UsageThresholds(props: {
  thresholds: readonly UsageThreshold[]
  save: (thresholds: UsageThreshold[]) => Promise<void>
}) {
  const titleId = `${useId()}-thresholds`
  const [measure, setMeasure] = useState<UsageMeasure>('billable')
  const [period, setPeriod] = useState<UsagePeriod>('month')
  const [value, setValue] = useState('')
  const [status, setStatus] = useState<string>()
  const [removeError, setRemoveError] = useState<unknown>()
  const amount = Number(value)
  const problem = value === '' || (Number.isInteger(amount) && amount >= 1) ? undefined : 'a whole number from 1'
  const adding = useSubmit(
    async () => {
      const added = { measure, period, value: amount }
      await props.save([...props.thresholds, added])
      setValue('')
      setStatus(`Added: ${thresholdWords(added)}.`)
    },
    problem === undefined && value !== '',
  )
  const remove = async (at: number) => {
    setRemoveError(undefined)
    try {
      const removed = props.thresholds[at]!
      await props.save(props.thresholds.filter((_, i) => i !== at))
      setStatus(`Removed: ${thresholdWords(removed)}.`)
    } catch (err) {
      setRemoveError(err)
    }
  }
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>Usage thresholds</h2>
      <p class="muted">
        Each crossing is sent once a period as the webhook event <code>usage.threshold</code>, to the endpoints that
        name it.
      </p>
      {props.thresholds.length === 0 ? (
        <p class="muted">None.</p>
      ) : (
        <ul>
          {props.thresholds.map((threshold, i) => (
            <li key={`${threshold.measure}-${threshold.period}-${threshold.value}`}>
              {thresholdWords(threshold)}{' '}
              <button
                type="button"
                class="secondary"
                aria-label={`Remove ${thresholdWords(threshold)}`}
                onClick={() => void remove(i)}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <ErrorNote error={removeError} />
      <WriteForm label="Add a usage threshold" submitLabel="Add threshold" submitting={adding}>
        <Select
          label="Counting"
          value={measure}
          onChange={setMeasure}
          options={USAGE_MEASURES.map((option) => [option, MEASURE_WORDS[option]] as const)}
        />
        <Select
          label="Over"
          value={period}
          onChange={setPeriod}
          options={USAGE_PERIODS.map((option) => [option, `the current ${PERIOD_WORDS[option]}`] as const)}
        />
        <Field label="At" type="number" min={1} value={value} onChange={setValue} problem={problem} required />
      </WriteForm>
      <StatusNote text={status} />
    </section>
  )
}
