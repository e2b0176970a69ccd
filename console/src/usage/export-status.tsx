import { useId } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { hrefOf } from '../router.js'
import { useLoad } from '../ui/use-load.js'

/**
 * Where an identity's usage is billed: each meter export (a webhook endpoint with `export`), with the customer the
 * identity names for it — or the meta field it lacks, in which case its hours wait in that export's dead letters —
 * and a link to the export's delivery log. Nothing when there are no exports, or the root key may not list endpoints.
 */
export function ExportStatus(props: { api: KeygateApi; meta: Record<string, unknown>; externalId: string }) {
  const titleId = `${useId()}-exports`
  const endpoints = useLoad(() => props.api.get('webhooks.listEndpoints'), [props.api])
  const exports = (endpoints.data?.endpoints ?? []).filter((endpoint) => endpoint.export !== undefined)
  if (exports.length === 0) return null
  return (
    <section aria-labelledby={titleId}>
      <h2 id={titleId}>Meter exports</h2>
      <ul>
        {exports.map((endpoint) => {
          const { provider, meter, customerField } = endpoint.export!
          const customer = customerField === undefined ? props.externalId : props.meta[customerField]
          const named = typeof customer === 'string' && customer !== ''
          return (
            <li key={endpoint.endpointId}>
              <a href={hrefOf({ page: 'webhook', endpointId: endpoint.endpointId })}>
                {provider}: {meter}
              </a>{' '}
              {named ? (
                <>
                  — billed as <span class="mono">{customer}</span>
                </>
              ) : (
                <>
                  — <strong>no meta.{customerField}</strong>: its hours are held in the export's dead letters until it
                  is set
                </>
              )}
            </li>
          )
        })}
      </ul>
    </section>
  )
}
