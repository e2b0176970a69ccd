import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import type { TestDelivery, WebhookEndpoint } from '../types.js'
import { Select } from '../ui/fields.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'
import { EVENT_TYPES } from '../webhook-event-types.js'

/** The type the API sends when none is named: key.created, or the endpoint's first type if it does not take it. */
function defaultTypeOf(endpoint: WebhookEndpoint): string {
  const types = endpoint.eventTypes
  return types.length === 0 || types.includes('key.created') ? 'key.created' : types[0]!
}

/** The answer in words: delivered or not, the endpoint's status or why none came, and how long it took. */
export function testAnswerText(answer: TestDelivery): string {
  const said = answer.error ?? `HTTP ${answer.status}`
  return answer.delivered
    ? `Delivered: the endpoint answered HTTP ${answer.status} in ${answer.latencyMs} ms.`
    : `Not delivered: ${said} after ${answer.latencyMs} ms.`
}

/**
 * Sending the endpoint a signed example event now (webhooks.sendTest), of the type chosen: what the endpoint
 * answered is shown here (its body as text), and the attempt goes to the delivery log, marked as a test.
 */
export function SendTest(props: { api: KeygateApi; endpoint: WebhookEndpoint; onSent: () => void }) {
  const [eventType, setEventType] = useState(() => defaultTypeOf(props.endpoint))
  const [answer, setAnswer] = useState<TestDelivery>()
  const submitting = useSubmit(async () => {
    setAnswer(undefined)
    setAnswer(await props.api.post('webhooks.sendTest', { endpointId: props.endpoint.endpointId, eventType }))
    props.onSent()
  })
  return (
    <section aria-labelledby="send-test-title">
      <h2 id="send-test-title">Send a test event</h2>
      <p>
        An example event of the type (example ids, no real data), signed with the endpoint's secret and sent now, once,
        as real events are. Its id starts with <span class="mono">msg_test_</span>.
      </p>
      <WriteForm labelledBy="send-test-title" submitLabel="Send now" submitting={submitting}>
        <Select
          label="Event type"
          value={eventType}
          options={EVENT_TYPES.map((type) => [type, type] as const)}
          onChange={setEventType}
        />
      </WriteForm>
      {answer ? (
        <div role="status" class="test-answer">
          <p>
            <span class={`badge ${answer.delivered ? 'on' : 'off'}`}>{answer.delivered ? 'delivered' : 'failed'}</span>{' '}
            {testAnswerText(answer)}
          </p>
          <p class="mono muted">{answer.eventId}</p>
          {answer.responseSnippet ? (
            <details>
              <summary>What the endpoint answered</summary>
              <pre>{answer.responseSnippet}</pre>
            </details>
          ) : null}
        </div>
      ) : null}
    </section>
  )
}
