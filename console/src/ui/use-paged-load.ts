import { useCursorPages } from './pager.js'
import { useLoad, type Loaded } from './use-load.js'

export interface PagedLoaded<T> extends Loaded<T> {
  pages: ReturnType<typeof useCursorPages>
  /** Pager's props but `what`: `<Pager what="apis" {...list.pager} />`. */
  pager: { page: number; nextCursor: string | undefined; onNext: (cursor: string) => void; onPrevious: () => void }
}

/**
 * useLoad for a list the API pages on a cursor: `load` is given the cursor of the page to show (undefined for the
 * first), and runs again when it or `inputs` change.
 */
export function usePagedLoad<T extends { cursor?: string }>(
  load: (cursor: string | undefined) => Promise<T>,
  inputs: unknown[],
): PagedLoaded<T> {
  const pages = useCursorPages()
  const loaded = useLoad(() => load(pages.cursor), [...inputs, pages.cursor])
  return {
    ...loaded,
    pages,
    pager: { page: pages.page, nextCursor: loaded.data?.cursor, onNext: pages.next, onPrevious: pages.previous },
  }
}
