import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatSecond, formatTime } from '../format.js'
import type { DeliveryAttempt } from '../types.js'
import { EntityTable } from '../ui/entity-table.js'
import { ErrorNote } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'
import { ReplaySince } from './replay-since.js'

/** How many attempts and dead letters the log shows (the store keeps 100 attempts an endpoint, and 10 tests apart). */
const SHOWN = 50

/**
 * What was sent to an endpoint (webhooks.listAttempts): its last attempts and the deliveries given up, newest first,
 * each event sendable again (webhooks.replay; a test event is not kept, so not), and every event since a time. The
 * endpoint's answers are shown as text. A change of `freshness` loads the log again (a test sent from the page).
 */
export function DeliveryLog(props: {
  api: KeygateApi
  endpointId: string
  onReplayed: (said: string) => void
  freshness?: number
}) {
  const { api, endpointId } = props
  const log = useLoad(
    () => api.get('webhooks.listAttempts', { endpointId, limit: SHOWN }),
    [api, endpointId, props.freshness],
  )
  const [error, setError] = useState<unknown>()
  const replay = async (eventId: string) => {
    setError(undefined)
    try {
      await api.post('webhooks.replay', { endpointId, eventId })
      props.onReplayed(`Queued the event ${eventId} to be sent again.`)
      log.reload()
    } catch (err) {
      setError(err)
    }
  }
  const sendAgain = (eventId: string) => ({
    label: 'Send again',
    what: `event ${eventId}`,
    onClick: () => void replay(eventId),
  })
  return (
    <section aria-labelledby="delivery-log-title">
      <h2 id="delivery-log-title">Delivery log</h2>
      <p class="muted">
        The last {SHOWN} attempts, newest first, and the last test events among them. An event sent again keeps its id
        (webhook-id): a receiver that has it already drops it.
      </p>
      <ReplaySince
        api={api}
        endpointId={endpointId}
        onReplayed={(said) => {
          props.onReplayed(said)
          log.reload()
        }}
      />
      <button type="button" class="secondary" onClick={log.reload} disabled={log.loading}>
        Refresh the log
      </button>
      <ErrorNote error={error} />
      <EntityTable
        caption="Delivery attempts"
        rows={log.data?.attempts.map((attempt) => ({ ...attempt, id: `${attempt.deliveryId}#${attempt.attempt}` }))}
        error={log.error}
        empty="Nothing has been sent to this endpoint yet."
        columns={[
          { header: 'Sent', cell: (attempt) => formatSecond(attempt.at) },
          {
            header: 'Event',
            class: 'name',
            cell: (attempt) => (
              <>
                {attempt.eventType}
                {attempt.test ? (
                  <>
                    {' '}
                    <span class="badge">test</span>
                  </>
                ) : null}
                <div class="mono muted">{attempt.eventId}</div>
              </>
            ),
          },
          { header: 'Attempt', cell: (attempt) => attempt.attempt },
          { header: 'Outcome', cell: (attempt) => <Outcome outcome={attempt.outcome} /> },
          { header: 'Answer', class: 'name', cell: answerOf },
          { header: 'Took', cell: (attempt) => `${attempt.latencyMs} ms` },
        ]}
        actions={(attempt) => (attempt.test ? [] : [sendAgain(attempt.eventId)])}
      />
      {log.data?.dead.length ? (
        <>
          <h3>Given up</h3>
          <EntityTable
            caption="Deliveries given up"
            rows={log.data.dead.map((dead) => ({ ...dead, id: dead.deliveryId }))}
            error={undefined}
            columns={[
              { header: 'Event', class: 'mono', cell: (dead) => dead.eventId },
              { header: 'Attempts', cell: (dead) => dead.attempts },
              { header: 'Queued', cell: (dead) => formatTime(dead.queuedAt) },
            ]}
            actions={(dead) => [sendAgain(dead.eventId)]}
          />
        </>
      ) : null}
    </section>
  )
}

function Outcome({ outcome }: { outcome: DeliveryAttempt['outcome'] }) {
  const tone = outcome === 'delivered' ? 'on' : outcome === 'dead' || outcome === 'failed' ? 'off' : ''
  return <span class={`badge ${tone}`}>{outcome === 'retry' ? 'will retry' : outcome}</span>
}

/** The endpoint's answer: why it failed or its status, and the start of its body (the endpoint's text, as text). */
function answerOf(attempt: DeliveryAttempt) {
  const said = attempt.error ?? (attempt.status === undefined ? '' : `HTTP ${attempt.status}`)
  return (
    <>
      {said}
      {attempt.responseSnippet ? (
        <details>
          <summary>Body</summary>
          <pre>{attempt.responseSnippet}</pre>
        </details>
      ) : null}
    </>
  )
}
