import { formatCredits, formatExpiry, formatTime } from '../format.js'
import { hrefOf } from '../router.js'
import type { Key } from '../types.js'

/** A key's state at a glance: enabled or disabled, expired when its time has passed, and leaked when reported. */
export function KeyState({ keyRecord, now = Date.now() }: { keyRecord: Key; now?: number }) {
  const leaked = keyRecord.leaked ? (
    <>
      {' '}
      <span class="badge leaked">leaked</span>
    </>
  ) : null
  if (!keyRecord.enabled)
    return (
      <>
        <span class="badge off">disabled</span>
        {leaked}
      </>
    )
  if (keyRecord.expires !== undefined && keyRecord.expires <= now)
    return (
      <>
        <span class="badge off">expired</span>
        {leaked}
      </>
    )
  return (
    <>
      <span class="badge on">enabled</span>
      {leaked}
    </>
  )
}

/** The keys table: one row per key, with a checkbox each for the bulk actions. */
export function KeyTable(props: {
  keys: Key[]
  selected: ReadonlySet<string>
  onSelect: (selected: Set<string>) => void
}) {
  const { keys, selected } = props
  const all = keys.length > 0 && keys.every((key) => selected.has(key.id))
  const toggle = (id: string, on: boolean) => {
    const next = new Set(selected)
    if (on) next.add(id)
    else next.delete(id)
    props.onSelect(next)
  }
  return (
    <table class="keys">
      <caption class="visually-hidden">Keys</caption>
      <thead>
        <tr>
          <th scope="col">
            <input
              type="checkbox"
              aria-label="Select every key on this page"
              checked={all}
              onChange={(event) =>
                props.onSelect(event.currentTarget.checked ? new Set(keys.map((key) => key.id)) : new Set())
              }
            />
          </th>
          <th scope="col">Name</th>
          <th scope="col">Key id</th>
          <th scope="col">Start</th>
          <th scope="col">Owner</th>
          <th scope="col">State</th>
          <th scope="col">Expires</th>
          <th scope="col">Credits</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => (
          <tr key={key.id}>
            <td>
              <input
                type="checkbox"
                aria-label={`Select ${key.name ?? key.id}`}
                checked={selected.has(key.id)}
                onChange={(event) => toggle(key.id, event.currentTarget.checked)}
              />
            </td>
            <td class="name">
              <a href={hrefOf({ page: 'key', keyId: key.id })}>{key.name ?? <span class="muted">(no name)</span>}</a>
            </td>
            <td class="mono">{key.id}</td>
            <td class="mono">{key.start}…</td>
            <td class="name">{key.ownerId ?? ''}</td>
            <td>
              <KeyState keyRecord={key} />
            </td>
            <td>{formatExpiry(key.expires)}</td>
            <td>{formatCredits(key.remaining)}</td>
            <td>{formatTime(key.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}
