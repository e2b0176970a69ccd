import type { KeygateApi } from '../api.js'
import { formatDuration, formatJson } from '../format.js'
import { hrefOf } from '../router.js'
import { ErrorNote, Fields, Page } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'
import { UsageChart } from '../usage/usage-chart.js'
import { UsageThresholds } from '../usage/usage-thresholds.js'
import { ExportStatus } from '../usage/export-status.js'

/** An identity: its fields (identities.getIdentity) and the usage of its keys. */
export function IdentityPage({ api, identityId }: { api: KeygateApi; identityId: string }) {
  const identity = useLoad(() => api.get('identities.getIdentity', { identityId }), [api, identityId])
  const record = identity.data
  return (
    <Page title={record ? `Identity ${record.externalId}` : 'Identity'}>
      <p class="muted">
        <a href={hrefOf({ page: 'identities' })}>Identities</a> / <span class="mono">{identityId}</span>
      </p>
      <ErrorNote error={identity.error} />
      {record ? (
        <Fields
          rows={[
            ['External id', record.externalId],
            ['Identity id', <span class="mono">{record.id}</span>],
            [
              'Rate limits',
              record.ratelimits
                .map((limit) => `${limit.name}: ${limit.limit} per ${formatDuration(limit.duration)}`)
                .join('; '),
            ],
            ['Meta', Object.keys(record.meta).length > 0 ? <pre>{formatJson(record.meta)}</pre> : undefined],
          ]}
        />
      ) : null}
      <UsageChart api={api} scope={{ kind: 'identity', id: identityId }} />
      {record ? (
        <UsageThresholds
          thresholds={record.usageThresholds ?? []}
          save={async (usageThresholds) => {
            await api.post('identities.updateIdentity', { identityId, usageThresholds })
            identity.reload()
          }}
        />
      ) : null}
      {record ? <ExportStatus api={api} meta={record.meta} externalId={record.externalId} /> : null}
    </Page>
  )
}
