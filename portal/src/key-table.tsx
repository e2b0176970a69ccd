import { formatCredits, formatExpiry, formatTime } from '../../console/src/format.js'
import { TableScroll } from '../../console/src/ui/table-scroll.js'
import { keyLabel } from './key-label.js'
import type { PortalKey } from './types.js'

/** The buttons a row offers: only those the session's scopes allow. */
export interface KeyActions {
  roll?: (key: PortalKey) => void
  revoke?: (key: PortalKey) => void
}

/** The customer's keys, a row each; wider than a phone, it scrolls sideways in its own region. */
export function KeyTable({ keys, actions }: { keys: PortalKey[]; actions: KeyActions }) {
  const { roll, revoke } = actions
  const acts = roll !== undefined || revoke !== undefined
  return (
    <TableScroll label="Table of your keys">
      <table>
        <caption class="visually-hidden">Your keys</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col">Credits</th>
            <th scope="col">Enabled</th>
            {acts ? (
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            ) : null}
          </tr>
        </thead>
        <tbody>
          {keys.map((key) => (
            <tr key={key.keyId}>
              <td class="name">{key.name ?? <span class="muted">(no name)</span>}</td>
              <td class="mono">{key.start}…</td>
              <td>{formatTime(key.createdAt)}</td>
              <td>{key.lastUsedAt === undefined ? 'never' : formatTime(key.lastUsedAt)}</td>
              <td>{formatExpiry(key.expires)}</td>
              <td>{formatCredits(key.credits?.remaining ?? undefined)}</td>
              <td>
                <span class={key.enabled ? 'badge on' : 'badge off'}>{key.enabled ? 'yes' : 'no'}</span>
              </td>
              {acts ? (
                <td>
                  {/* Flex inside the cell: a flex <td> would leave the table's layout. */}
                  <div class="row-actions">
                    {roll ? (
                      <button type="button" class="secondary" onClick={() => roll(key)}>
                        Roll<span class="visually-hidden"> {keyLabel(key)}</span>
                      </button>
                    ) : null}
                    {revoke ? (
                      <button type="button" class="secondary danger" onClick={() => revoke(key)}>
                        Revoke<span class="visually-hidden"> {keyLabel(key)}</span>
                      </button>
                    ) : null}
                  </div>
                </td>
              ) : null}
            </tr>
          ))}
        </tbody>
      </table>
    </TableScroll>
  )
}
