import type { ComponentChildren } from 'preact'
import { ErrorNote } from './page.js'
import { TableScroll } from './table-scroll.js'

export interface Column<T> {
  header: string
  /** The cell's class: "name" (wraps long names), "mono" (ids). */
  class?: string
  cell: (row: T) => ComponentChildren
}

/** A button on a row: its verb, and what it acts on for screen readers ("Delete" + "api billing"). */
export interface RowAction {
  label: string
  what: string
  onClick: () => void
}

/**
 * A list of records as a table (once loaded) under the error of loading it: a column each, a row per record, and
 * the row's buttons last. `empty`, when given, is said instead of an empty table.
 */
export function EntityTable<T extends { id: string }>(props: {
  /** The table's name, for screen readers. */
  caption: string
  rows: T[] | undefined
  error: unknown
  columns: Column<T>[]
  actions?: (row: T) => RowAction[]
  empty?: string | undefined
}) {
  const { rows, columns, actions } = props
  return (
    <>
      <ErrorNote error={props.error} />
      {!rows ? null : rows.length === 0 && props.empty !== undefined ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <TableScroll label={props.caption}>
          <table>
            <caption class="visually-hidden">{props.caption}</caption>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column.header} scope="col">
                    {column.header}
                  </th>
                ))}
                {actions ? (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row.id}>
                  {columns.map((column) => (
                    <td key={column.header} class={column.class}>
                      {column.cell(row)}
                    </td>
                  ))}
                  {actions ? <ActionsCell actions={actions(row)} /> : null}
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </>
  )
}

function ActionsCell({ actions }: { actions: RowAction[] }) {
  // Several buttons sit in a wrapping row; a lone one stays a plain table cell (a flex <td> leaves the table's layout).
  return (
    <td class={actions.length > 1 ? 'actions' : undefined}>
      {actions.map((action) => (
        <button key={action.label} type="button" class="secondary" onClick={action.onClick}>
          {action.label}
          <span class="visually-hidden"> {action.what}</span>
        </button>
      ))}
    </td>
  )
}
