import { RANGE_NAMES, RANGES, type UsageRange } from './usage-ranges.js'

/**
 * The choice of range, pressed buttons in a group, and Refresh: usage loads when a page opens and when the admin asks
 * again, never on a timer (analytics queries are counted: 1,000 an hour).
 */
export function RangeButtons(props: {
  range: UsageRange
  onRange: (range: UsageRange) => void
  onRefresh: () => void
}) {
  return (
    <div class="actions" role="group" aria-label="Range">
      {RANGE_NAMES.map((name) => (
        <button
          key={name}
          type="button"
          class="secondary"
          aria-pressed={props.range === name}
          onClick={() => props.onRange(name)}
        >
          {RANGES[name].label}
        </button>
      ))}
      <button type="button" class="secondary" onClick={props.onRefresh}>
        Refresh
      </button>
    </div>
  )
}
