import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { formatTime } from '../format.js'
import { hrefOf } from '../router.js'
import type { ConsoleAnswers, WebhookEndpoint } from '../types.js'
import { EntityTable } from '../ui/entity-table.js'
import { Page, StatusNote, useStatus } from '../ui/page.js'
import { useRowConfirm } from '../ui/row-confirm.js'
import { ShownOnce } from '../ui/shown-once.js'
import { useLoad } from '../ui/use-load.js'
import { WriteForm } from '../ui/write-form.js'
import { useSubmit } from '../ui/use-submit.js'
import { apiIdsText, createBodyOf, EMPTY_ENDPOINT_FORM, eventTypesText } from './endpoint-form.js'
import { EndpointFormFields } from './endpoint-form-fields.js'
import { DELETE_WARNING, EndpointState, SECRET_WARNING } from './webhook-fields.js'

type ListedEndpoint = WebhookEndpoint & { id: string }

/**
 * Webhooks: the endpoints Keygate sends events to (webhooks.listEndpoints: at most 100, all on one page), creating
 * one (its signing secret shown once), deleting one. An endpoint's own page changes it.
 */
export function WebhooksPage({ api }: { api: KeygateApi }) {
  const list = useLoad(async () => {
    const { endpoints } = await api.get('webhooks.listEndpoints')
    return endpoints.map((endpoint): ListedEndpoint => ({ ...endpoint, id: endpoint.endpointId }))
  }, [api])
  const [status, say] = useStatus(list.reload)
  const [created, setCreated] = useState<ConsoleAnswers['webhooks.createEndpoint']>()
  const remove = useRowConfirm(
    (endpoint: ListedEndpoint) => ({
      title: `Delete the endpoint ${endpoint.url}?`,
      confirmLabel: 'Delete endpoint',
      warning: DELETE_WARNING,
      run: () => api.post('webhooks.deleteEndpoint', { endpointId: endpoint.endpointId }),
      said: `Deleted the endpoint ${endpoint.url}: nothing more is sent to it.`,
    }),
    say,
  )
  return (
    <Page title="Webhooks">
      <p class="muted">
        Keygate sends each event (a key created, an identity deleted…) to every enabled endpoint that takes its type
        and, for an endpoint scoped to apis, is about one of them: a POST signed with the endpoint's secret, per the
        Standard Webhooks specification.
      </p>
      {created ? (
        <ShownOnce
          label="Signing secret"
          secret={created.secret}
          warning={SECRET_WARNING}
          onDone={() => setCreated(undefined)}
        >
          <a href={hrefOf({ page: 'webhook', endpointId: created.endpointId })}>
            Open the endpoint {created.endpointId}
          </a>
        </ShownOnce>
      ) : null}
      <CreateEndpoint
        api={api}
        onCreated={(made, url) => {
          setCreated(made)
          say(`Created the endpoint ${url} (${made.endpointId}).`)
        }}
      />
      <StatusNote text={status} />
      <EntityTable
        caption="Webhook endpoints"
        rows={list.data}
        error={list.error}
        empty="No endpoints yet: events are sent nowhere until you create one above."
        columns={[
          {
            header: 'Endpoint',
            class: 'name',
            cell: (endpoint) => (
              <>
                <a href={hrefOf({ page: 'webhook', endpointId: endpoint.endpointId })}>{endpoint.url}</a>
                {endpoint.description ? <div class="muted">{endpoint.description}</div> : null}
              </>
            ),
          },
          { header: 'Events', class: 'name', cell: (endpoint) => eventTypesText(endpoint.eventTypes) },
          { header: 'Apis', class: 'name', cell: (endpoint) => apiIdsText(endpoint.apiIds) },
          { header: 'State', cell: (endpoint) => <EndpointState enabled={endpoint.enabled} /> },
          { header: 'Created', cell: (endpoint) => formatTime(endpoint.createdAt) },
        ]}
        actions={(endpoint) => [
          { label: 'Delete', what: `endpoint ${endpoint.url}`, onClick: () => remove.open(endpoint) },
        ]}
      />
      {remove.dialog}
    </Page>
  )
}

function CreateEndpoint(props: {
  api: KeygateApi
  onCreated: (made: ConsoleAnswers['webhooks.createEndpoint'], url: string) => void
}) {
  const [form, setForm] = useState(EMPTY_ENDPOINT_FORM)
  const creating = useSubmit(async () => {
    const body = createBodyOf(form)
    const made = await props.api.post('webhooks.createEndpoint', body)
    setForm(EMPTY_ENDPOINT_FORM)
    props.onCreated(made, body.url)
  })
  return (
    <WriteForm label="Create a webhook endpoint" submitLabel="Create endpoint" submitting={creating}>
      <EndpointFormFields form={form} onChange={setForm} />
    </WriteForm>
  )
}
