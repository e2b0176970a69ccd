import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'
import { ErrorNote } from './page.js'

interface ConfirmProps {
  title: string
  children: ComponentChildren
  /** The button that does it, e.g. "Delete api". */
  confirmLabel: string
  /** When set, the admin must type this (an api's name) before the button is enabled. */
  typeToConfirm?: string
  onConfirm: () => Promise<void>
  onClose: () => void
}

/**
 * A modal question before a destructive call, in a native <dialog>: the browser keeps focus inside it, Escape
 * cancels, and focus returns where it was. A failed call is shown in it, not lost.
 */
export function ConfirmDialog(props: ConfirmProps) {
  const id = useId()
  const dialog = useRef<HTMLDialogElement>(null)
  const [typed, setTyped] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const element = dialog.current
    element?.showModal()
    return () => element?.close()
  }, [])
  const ready = props.typeToConfirm === undefined || typed === props.typeToConfirm
  const confirm = async (event: Event) => {
    event.preventDefault()
    if (!ready || busy) return
    setBusy(true)
    try {
      await props.onConfirm()
      props.onClose()
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <dialog
      ref={dialog}
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault()
        props.onClose()
      }}
    >
      <form method="dialog" onSubmit={(event) => void confirm(event)}>
        <h2 id={`${id}-title`}>{props.title}</h2>
        {props.children}
        {props.typeToConfirm !== undefined ? (
          <div class="field">
            <label for={`${id}-name`}>
              Type <strong class="literal">{props.typeToConfirm}</strong> to confirm
            </label>
            <input
              id={`${id}-name`}
              value={typed}
              autoComplete="off"
              spellcheck={false}
              onInput={(event) => setTyped(event.currentTarget.value)}
            />
          </div>
        ) : null}
        <ErrorNote error={error} />
        <div class="actions">
          <button type="submit" class="danger" disabled={!ready || busy}>
            {props.confirmLabel}
          </button>
          <button type="button" class="secondary" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  )
}
