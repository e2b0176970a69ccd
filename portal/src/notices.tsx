import { useMemo, useState } from 'preact/hooks'
import { ErrorWords } from '../../console/src/ui/error-words.js'
import { describeError, PortalCallError } from './portal-api.js'

/** What the page last said: a done write (polite) or a failed call (assertive). */
export interface Notice {
  kind: 'status' | 'error'
  text: string
}

/** How a part of the page reports: say(text) for what a write did, fail(err) for a call that failed. */
export interface Report {
  say: (text: string) => void
  fail: (err: unknown) => void
}

/**
 * The page's notices and how to report to them. A 401 is left out: the API client has already ended the session,
 * and the page says so in place of everything else.
 */
export function useNotices(): [Notice | undefined, Report] {
  const [notice, setNotice] = useState<Notice>()
  // One object for the page's life: effects that report may name it among their inputs.
  const report = useMemo<Report>(
    () => ({
      say: (text) => setNotice({ kind: 'status', text }),
      fail: (err) => {
        if (err instanceof PortalCallError && err.status === 401) return
        setNotice({ kind: 'error', text: describeError(err) })
      },
    }),
    [],
  )
  return [notice, report]
}

/**
 * Two live regions, present from the start so that screen readers announce what appears in them: the status of a
 * write, and the error of a failed call, in words.
 */
export function Notices({ notice }: { notice: Notice | undefined }) {
  return (
    <div class="notices">
      <p role="status" class="status">
        {notice?.kind === 'status' ? notice.text : ''}
      </p>
      <p role="alert" class="error">
        {notice?.kind === 'error' ? notice.text : ''}
      </p>
    </div>
  )
}

/** A failed call inside a dialog or form, said where it was made (and announced as it appears). */
export function ErrorNote({ error }: { error: unknown }) {
  return <ErrorWords error={error} describe={describeError} />
}
