import { formatTime } from '../format.js'
import type { WebhookEndpoint } from '../types.js'
import { Fields } from '../ui/page.js'
import { apiIdsText, eventTypesText } from './endpoint-form.js'

/** A webhook secret's shown-once warning: Keygate keeps it (it signs with it) but no call shows it again. */
export const SECRET_WARNING =
  'This is the only time it is shown: Keygate signs with it but never shows it again (rotating makes a new one). ' +
  'Give it to the receiver, which checks each delivery with it, before you leave this page.'

/** What deleting an endpoint cannot undo, said in the dialog that asks first. */
export const DELETE_WARNING = 'Nothing more is sent to it, and its delivery log is deleted. This cannot be undone.'

/** Whether events are sent to an endpoint, at a glance. */
export function EndpointState({ enabled }: { enabled: boolean }) {
  return enabled ? <span class="badge on">enabled</span> : <span class="badge off">disabled</span>
}

/** An endpoint's fields on its page (never its secret: no call answers it but the two that make one). */
export function EndpointFields({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <Fields
      rows={[
        ['State', <EndpointState enabled={endpoint.enabled} />],
        ['Endpoint id', <span class="mono">{endpoint.endpointId}</span>],
        ['URL', <span class="mono">{endpoint.url}</span>],
        ['Description', endpoint.description],
        ['Event types', eventTypesText(endpoint.eventTypes)],
        ['Apis', <span class="mono">{apiIdsText(endpoint.apiIds)}</span>],
        [
          'Meter export',
          endpoint.export
            ? `${endpoint.export.provider}: ${endpoint.export.meter}, ${endpoint.export.measure === 'credits' ? 'credits spent' : 'billable verifications'} per hour` +
              (endpoint.export.customerField ? `, customer from meta.${endpoint.export.customerField}` : '')
            : undefined,
        ],
        ['Created', formatTime(endpoint.createdAt)],
        ['Updated', formatTime(endpoint.updatedAt)],
      ]}
    />
  )
}
