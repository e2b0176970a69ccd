import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef } from 'preact/hooks'

/**
 * A modal question in a native <dialog>: the browser keeps focus inside it and Escape closes it. When it closes,
 * focus goes back to what opened it (if that is still on the page); an action that removes it, or shows its result
 * elsewhere, moves focus there itself.
 */
export function Modal(props: { title: string; onClose: () => void; children: ComponentChildren }) {
  const id = useId()
  const dialog = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const opener = document.activeElement instanceof HTMLElement ? document.activeElement : undefined
    const element = dialog.current
    element?.showModal()
    return () => {
      element?.close()
      if (opener?.isConnected) opener.focus()
    }
  }, [])
  return (
    <dialog
      ref={dialog}
      aria-labelledby={`${id}-title`}
      onCancel={(event) => {
        event.preventDefault()
        props.onClose()
      }}
    >
      <h2 id={`${id}-title`}>{props.title}</h2>
      {props.children}
    </dialog>
  )
}
