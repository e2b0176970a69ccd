import { useState } from 'preact/hooks'
import { ConfirmDialog } from './confirm.js'

/** What asking before a row's destructive action says, and the call it makes. */
export interface RowConfirmation {
  title: string
  confirmLabel: string
  typeToConfirm?: string
  /** What it cannot undo, said in the dialog. */
  warning: string
  run: () => Promise<unknown>
  /** Said in the page's status line once `run` succeeded. */
  said: string
}

/**
 * A destructive action on a row, asked about first: open(row) shows the dialog `ask(row)` describes; once its call
 * succeeded, `onDone` is given what to say. Render `dialog` where the dialog goes.
 */
export function useRowConfirm<T>(ask: (row: T) => RowConfirmation, onDone: (said: string) => void) {
  const [row, setRow] = useState<T>()
  const asked = row === undefined ? undefined : ask(row)
  return {
    open: (next: T) => setRow(() => next),
    dialog: asked ? (
      <ConfirmDialog
        title={asked.title}
        confirmLabel={asked.confirmLabel}
        typeToConfirm={asked.typeToConfirm}
        onClose={() => setRow(undefined)}
        onConfirm={async () => {
          await asked.run()
          onDone(asked.said)
        }}
      >
        <p>{asked.warning}</p>
      </ConfirmDialog>
    ) : null,
  }
}
