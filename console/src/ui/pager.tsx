import { useState } from 'preact/hooks'

/**
 * Paging on an API's cursor: the cursors of the pages before this one are kept, so "Previous page" goes back
 * without the API having to page backwards. A new search or filter calls first().
 */
export function useCursorPages() {
  const [trail, setTrail] = useState<string[]>([])
  const cursor = trail[trail.length - 1]
  return {
    cursor,
    page: trail.length + 1,
    next: (next: string) => setTrail([...trail, next]),
    previous: () => setTrail(trail.slice(0, -1)),
    first: () => setTrail([]),
  }
}

export function Pager(props: {
  page: number
  nextCursor: string | undefined
  onNext: (cursor: string) => void
  onPrevious: () => void
  /** What a page holds, for the label: "keys", "apis". */
  what: string
}) {
  if (props.page === 1 && !props.nextCursor) return null
  return (
    <nav class="actions pager" aria-label={`Pages of ${props.what}`}>
      <button type="button" class="secondary" disabled={props.page === 1} onClick={props.onPrevious}>
        Previous page
      </button>
      <span>Page {props.page}</span>
      <button
        type="button"
        class="secondary"
        disabled={!props.nextCursor}
        onClick={() => props.nextCursor && props.onNext(props.nextCursor)}
      >
        Next page
      </button>
    </nav>
  )
}
