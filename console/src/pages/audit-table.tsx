import { formatJson, formatTime } from '../format.js'
import { hrefOf } from '../router.js'
import type { AuditEntry } from '../types.js'

/** Audit entries, newest first: when, what, by which root key, on what; the record before and after on demand. */
export function AuditTable({ entries }: { entries: AuditEntry[] }) {
  if (entries.length === 0) return <p class="muted">No entries.</p>
  return (
    <table class="audit">
      <caption class="visually-hidden">Audit entries</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Action</th>
          <th scope="col">Root key</th>
          <th scope="col">Api</th>
          <th scope="col">Key</th>
          <th scope="col">Change</th>
        </tr>
      </thead>
      <tbody>
        {entries.map((entry) => (
          <tr key={entry.id}>
            <td>{formatTime(entry.at)}</td>
            <td class="mono">{entry.action}</td>
            <td class="mono">{entry.rootKeyId}</td>
            <td class="mono">
              {entry.apiId ? <a href={hrefOf({ page: 'keys', apiId: entry.apiId })}>{entry.apiId}</a> : ''}
            </td>
            <td class="mono">
              {entry.keyId?.startsWith('key_') ? (
                <a href={hrefOf({ page: 'key', keyId: entry.keyId })}>{entry.keyId}</a>
              ) : (
                (entry.keyId ?? '')
              )}
            </td>
            <td>
              {entry.before || entry.after || entry.context ? (
                <details>
                  <summary>
                    Show
                    <span class="visually-hidden">
                      {' '}
                      the change of {entry.action} at {formatTime(entry.at)}
                    </span>
                  </summary>
                  {entry.before ? <Change label="Before" value={entry.before} /> : null}
                  {entry.after ? <Change label="After" value={entry.after} /> : null}
                  {entry.context ? <Change label="Context" value={entry.context} /> : null}
                </details>
              ) : null}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function Change({ label, value }: { label: string; value: Record<string, unknown> }) {
  return (
    <>
      <strong>{label}</strong>
      <pre>{formatJson(value)}</pre>
    </>
  )
}
