import type { RefObject } from 'preact'
import { useState } from 'preact/hooks'
import { KeyTable } from './key-table.js'
import { keyLabel } from './key-label.js'
import type { Report } from './notices.js'
import type { PortalApi } from './portal-api.js'
import { RevokeKeyDialog } from './revoke-key-dialog.js'
import { RollKeyDialog } from './roll-key-dialog.js'
import type { NewKey, PortalKey } from './types.js'
import type { KeyList } from './use-key-list.js'

/**
 * The customer's keys and what may be done to each: Roll (keys:reroll) and Revoke (keys:revoke), each asked in a
 * dialog. A rolled key is handed to onRolled, to be shown once; a revoked one leaves the table, and focus goes to
 * the section's heading, since its row and buttons are gone.
 */
export function KeysSection(props: {
  api: PortalApi
  list: KeyList
  canRoll: boolean
  canRevoke: boolean
  report: Report
  heading: RefObject<HTMLHeadingElement | null>
  focusHeading: () => void
  onRolled: (made: NewKey, overlapMs: number) => void
}) {
  const { list, report } = props
  const [rolling, setRolling] = useState<PortalKey>()
  const [revoking, setRevoking] = useState<PortalKey>()
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title" tabIndex={-1} ref={props.heading}>
        Your keys
      </h2>
      {list.keys === undefined ? (
        <p class="muted">{list.loading ? 'Loading your keys…' : 'Your keys could not be loaded.'}</p>
      ) : list.keys.length === 0 ? (
        <p class="muted">You have no keys yet.</p>
      ) : (
        <KeyTable
          keys={list.keys}
          actions={{
            ...(props.canRoll ? { roll: setRolling } : {}),
            ...(props.canRevoke ? { revoke: setRevoking } : {}),
          }}
        />
      )}
      {list.hasMore ? (
        <button type="button" class="secondary" disabled={list.loading} onClick={() => void list.more()}>
          Show more keys
        </button>
      ) : null}
      {rolling ? (
        <RollKeyDialog
          api={props.api}
          keyRecord={rolling}
          onClose={() => setRolling(undefined)}
          onRolled={(made, overlapMs) => {
            setRolling(undefined)
            props.onRolled(made, overlapMs)
            void list.reload()
          }}
        />
      ) : null}
      {revoking ? (
        <RevokeKeyDialog
          api={props.api}
          keyRecord={revoking}
          onClose={() => setRevoking(undefined)}
          onRevoked={(key) => {
            setRevoking(undefined)
            list.drop(key.keyId)
            report.say(`${keyLabel(key)} was revoked.`)
            props.focusHeading()
            void list.reload()
          }}
        />
      ) : null}
    </section>
  )
}
