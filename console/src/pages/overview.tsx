import { useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { hrefOf } from '../router.js'
import { EntityTable } from '../ui/entity-table.js'
import { LineChart, Swatch } from '../ui/line-chart.js'
import { ErrorNote, Page } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'
import { outcomeLook } from '../usage/outcomes.js'
import { RangeButtons } from '../usage/range-buttons.js'
import { UsageNote } from '../usage/usage-note.js'
import {
  busiestIdentities,
  busiestKeys,
  refusalsByReason,
  usageByOutcome,
  type UsageQuery,
} from '../usage/usage-queries.js'
import { linesOf, summaryOf } from '../usage/usage-lines.js'
import type { UsageRange } from '../usage/usage-ranges.js'
import { usageUnavailable } from '../usage/usage-unavailable.js'

/**
 * The console's landing page: verifications over the range by outcome across every api the root key may read, the
 * busiest keys and identities, and refusals by reason; four queries of the rollups, run when the page opens, when the
 * range changes and on Refresh. Where usage cannot be read it says so once; the other sections work as ever.
 */
export function OverviewPage({ api }: { api: KeygateApi }) {
  const [range, setRange] = useState<UsageRange>('day')
  const [now, setNow] = useState(() => Date.now())
  const answer = useLoad(async () => {
    const run = async <T,>(query: UsageQuery<T>) => query.read(await api.queryVerifications(query.sql))
    const [series, keys, identities, refusals] = await Promise.all([
      run(usageByOutcome(range, now)),
      run(busiestKeys(range, now)),
      run(busiestIdentities(range, now)),
      run(refusalsByReason(range, now)),
    ])
    return { range, series, keys, identities, refusals }
  }, [api, range, now])
  // Another range's answer, kept while this one's loads, is not shown under this range's name.
  const loaded = answer.data?.range === range ? answer.data : undefined
  const unavailable = usageUnavailable(answer.error)
  return (
    <Page title="Overview">
      <p class="muted">Verifications of the keys of every api this root key may read analytics of.</p>
      <RangeButtons range={range} onRange={setRange} onRefresh={() => setNow(Date.now())} />
      {unavailable ? (
        <UsageNote text={unavailable} />
      ) : (
        <>
          <ErrorNote error={answer.error} />
          <section aria-labelledby="overview-outcomes">
            <h2 id="overview-outcomes">Verifications by outcome</h2>
            <LineChart
              data={loaded ? linesOf(loaded.series) : undefined}
              summary={summaryOf(range, undefined, loaded?.series)}
              summaryId="usage-summary"
            />
          </section>
          <section aria-labelledby="overview-keys">
            <h2 id="overview-keys">Busiest keys</h2>
            <EntityTable
              caption="Busiest keys"
              error={undefined}
              rows={loaded?.keys.map((row) => ({ ...row, id: row.keyId }))}
              empty="No key was verified in this range."
              columns={[
                {
                  header: 'Key',
                  class: 'mono',
                  cell: (row) => <a href={hrefOf({ page: 'key', keyId: row.keyId })}>{row.keyId}</a>,
                },
                {
                  header: 'Api',
                  class: 'mono',
                  cell: (row) => <a href={hrefOf({ page: 'keys', apiId: row.apiId })}>{row.apiId}</a>,
                },
                { header: 'Verifications', cell: (row) => row.verifications.toLocaleString() },
                { header: 'Refused', cell: (row) => row.refused.toLocaleString() },
              ]}
            />
          </section>
          <section aria-labelledby="overview-identities">
            <h2 id="overview-identities">Busiest identities</h2>
            <EntityTable
              caption="Busiest identities"
              error={undefined}
              rows={loaded?.identities.map((row) => ({ ...row, id: row.externalId }))}
              empty="No key of an identity was verified in this range."
              columns={[
                {
                  header: 'External id',
                  class: 'name',
                  cell: (row) =>
                    row.identityId ? (
                      <a href={hrefOf({ page: 'identity', identityId: row.identityId })}>{row.externalId}</a>
                    ) : (
                      row.externalId
                    ),
                },
                { header: 'Verifications', cell: (row) => row.verifications.toLocaleString() },
                { header: 'Refused', cell: (row) => row.refused.toLocaleString() },
              ]}
            />
          </section>
          <section aria-labelledby="overview-refusals">
            <h2 id="overview-refusals">Refusals by reason</h2>
            <EntityTable
              caption="Refusals by reason"
              error={undefined}
              rows={loaded?.refusals.map((row) => ({ ...row, id: row.outcome }))}
              empty="No verification was refused in this range."
              columns={[
                {
                  header: 'Reason',
                  cell: (row) => (
                    <>
                      <Swatch colour={outcomeLook(row.outcome).colour} />
                      {outcomeLook(row.outcome).label}
                    </>
                  ),
                },
                { header: 'Verifications', cell: (row) => row.count.toLocaleString() },
              ]}
            />
          </section>
        </>
      )}
    </Page>
  )
}
