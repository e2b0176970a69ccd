import { useEffect, useRef, useState } from 'preact/hooks'
import { formatTime } from '../../console/src/format.js'
import { ShownOnce } from '../../console/src/ui/shown-once.js'
import { CreateKeyForm } from './create-key-form.js'
import { KeysSection } from './keys-section.js'
import { Notices, type Notice, type Report } from './notices.js'
import type { PortalApi } from './portal-api.js'
import type { NewKey, Scope, Session } from './types.js'
import { useFocusLater } from './use-focus-later.js'
import { useKeyList } from './use-key-list.js'
import { UsageSection } from './usage-section.js'

const SHOWN_ONCE =
  'You will not see it again: only a fingerprint of it is kept, which cannot be turned back into the key. ' +
  'Copy it now and store it somewhere safe.'

/** A key just made, shown once, and what to say with it (a rolled key: until when the old one works). */
interface Shown {
  key: string
  note?: string
}

/**
 * The signed-in page: a new key shown once, Create a key, the keys with their actions, and usage — each part only
 * when the session's scopes allow what it does.
 */
export function PortalHome(props: { api: PortalApi; session: Session; notice: Notice | undefined; report: Report }) {
  const { api, session, report } = props
  const can = (scope: Scope) => session.scopes.includes(scope)
  const list = useKeyList(api, can('keys:read'), report.fail)
  const [shown, setShown] = useState<Shown>()
  const pageHeading = useRef<HTMLHeadingElement>(null)
  const keysHeading = useRef<HTMLHeadingElement>(null)
  const focusLater = useFocusLater()
  useEffect(() => {
    document.title = `API keys · ${session.portal.name}`
  }, [session.portal.name])
  const show = (made: NewKey, shownNote?: string) => {
    setShown({ key: made.key, ...(shownNote ? { note: shownNote } : {}) })
    if (can('keys:read')) void list.reload()
  }
  const nothing = !['keys:read', 'keys:create', 'analytics:read'].some((scope) => can(scope as Scope))
  return (
    <main>
      <h1 tabIndex={-1} ref={pageHeading}>
        API keys
      </h1>
      {session.preview ? <p class="note">This is a preview of the page your customers see.</p> : null}
      <Notices notice={props.notice} />
      {shown ? (
        <ShownOnce
          label="New key"
          secret={shown.key}
          warning={SHOWN_ONCE}
          onDone={() => {
            setShown(undefined)
            focusLater(can('keys:read') ? keysHeading : pageHeading)
          }}
        >
          {shown.note ? <p>{shown.note}</p> : null}
        </ShownOnce>
      ) : null}
      {can('keys:create') ? (
        <CreateKeyForm
          api={api}
          apis={session.apis}
          onCreated={(made) => {
            report.say('Your new key was created.')
            show(made)
          }}
        />
      ) : null}
      {can('keys:read') ? (
        <KeysSection
          api={api}
          list={list}
          canRoll={can('keys:reroll')}
          canRevoke={can('keys:revoke')}
          report={report}
          heading={keysHeading}
          focusHeading={() => focusLater(keysHeading)}
          onRolled={(made, overlapMs) => {
            report.say('The key was rolled.')
            show(
              made,
              overlapMs > 0
                ? `The old key keeps working until ${formatTime(Date.now() + overlapMs)}.`
                : 'The old key has stopped working.',
            )
          }}
        />
      ) : null}
      {can('analytics:read') ? <UsageSection api={api} keys={list.keys} fail={report.fail} /> : null}
      {nothing ? <p>This page may not show or change any of your keys. Ask whoever sent you here.</p> : null}
    </main>
  )
}
