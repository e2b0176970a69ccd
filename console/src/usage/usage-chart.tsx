import { useId, useState } from 'preact/hooks'
import type { KeygateApi } from '../api.js'
import { Field } from '../ui/fields.js'
import { LineChart } from '../ui/line-chart.js'
import { ErrorNote } from '../ui/page.js'
import { useLoad } from '../ui/use-load.js'
import { RangeButtons } from './range-buttons.js'
import { tagFilterOf } from './tag-filter.js'
import { UsageNote } from './usage-note.js'
import { usageByOutcome, type UsageScope } from './usage-queries.js'
import { linesOf, summaryOf } from './usage-lines.js'
import type { UsageRange } from './usage-ranges.js'
import { usageUnavailable } from './usage-unavailable.js'

/**
 * An api's, key's or identity's verifications over the last 24 hours or 30 days, a line per outcome
 * (analytics.getVerifications), narrowed to the verifications that carried a tag when one is given. One query when
 * shown, when the range or the tag changes and on Refresh. Where usage cannot be read (the root key may not, or this
 * control plane serves no analytics) it says so, and the page around it works as before.
 */
export function UsageChart({ api, scope }: { api: KeygateApi; scope: UsageScope }) {
  const titleId = `${useId()}-title`
  const [range, setRange] = useState<UsageRange>('day')
  const [typed, setTyped] = useState('')
  const [tag, setTag] = useState<string>()
  const [now, setNow] = useState(() => Date.now())
  const filter = tagFilterOf(typed)
  const answer = useLoad(async () => {
    const query = usageByOutcome(range, now, { scope, tag })
    return { range, tag, series: query.read(await api.queryVerifications(query.sql)) }
  }, [api, scope.kind, scope.id, range, tag, now])
  // useLoad keeps the last answer while the next loads: another range's or tag's, which drawn under this one's label
  // would be wrong (a day's total at midnight, summed as the last 24 hours'). Until its own answer comes: "loading".
  const series = answer.data?.range === range && answer.data.tag === tag ? answer.data.series : undefined
  const unavailable = usageUnavailable(answer.error)
  return (
    <section aria-labelledby={titleId} class="usage">
      <h2 id={titleId}>Usage</h2>
      <RangeButtons range={range} onRange={setRange} onRefresh={() => setNow(Date.now())} />
      <form
        role="search"
        aria-label="Usage by tag"
        onSubmit={(event) => {
          event.preventDefault()
          if (!filter.problem) setTag(filter.tag)
        }}
      >
        <Field
          label="Tag"
          value={typed}
          onChange={setTyped}
          problem={filter.problem}
          hint="Only the verifications that carried this tag"
        />
        <button type="submit" class="secondary" disabled={filter.problem !== undefined}>
          Filter by tag
        </button>
        {tag !== undefined ? (
          <button
            type="button"
            class="link"
            onClick={() => {
              setTyped('')
              setTag(undefined)
            }}
          >
            Every tag
          </button>
        ) : null}
      </form>
      {unavailable ? (
        <UsageNote text={unavailable} />
      ) : (
        <>
          <ErrorNote error={answer.error} />
          <LineChart
            data={series ? linesOf(series) : undefined}
            summary={summaryOf(range, tag, series)}
            summaryId="usage-summary"
          />
        </>
      )}
    </section>
  )
}
