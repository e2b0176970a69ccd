import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { countOf, fromLocalInput, toLocalInput } from '../format.js'
import { Field } from '../ui/fields.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'
import { replayAllSince, type ReplayCall } from './replay-all.js'

/** The form's first time: an hour ago, a window a receiver that was down for a while wants again. */
const AN_HOUR = 3_600_000

/**
 * Sending an endpoint every kept event it takes since a time, again (webhooks.replay with `since`, then with each
 * `cursor` it answers: replay-all.ts).
 */
export function ReplaySince(props: { api: KeygateApi; endpointId: string; onReplayed: (said: string) => void }) {
  const [since, setSince] = useState(() => toLocalInput(Date.now() - AN_HOUR))
  const from = fromLocalInput(since)
  const submitting = useSubmit(async () => {
    if (from === undefined) return
    const post: ReplayCall = (operation, body) => props.api.post(operation, body)
    const queued = await replayAllSince(post, props.endpointId, from)
    props.onReplayed(`Queued ${countOf(queued, 'event')} to be sent again.`)
  }, from !== undefined)
  return (
    <WriteForm label="Send events again" submitLabel="Send events again" submitting={submitting}>
      <Field
        label="Every event since"
        type="datetime-local"
        required
        value={since}
        onChange={setSince}
        hint="The events this endpoint takes; Keygate keeps them for the retry window and a day."
      />
    </WriteForm>
  )
}
