import type { ComponentChildren } from 'preact'
import { useEffect, useId, useRef, useState } from 'preact/hooks'

const HASH_ONLY =
  'This is the only time it is shown: Keygate keeps only its hash and cannot show it again. ' +
  'Store it somewhere safe before you leave this page.'

/**
 * A key Keygate shows this once (a new key, a rerolled key, a new root key, a webhook's signing secret): in a
 * read-only field labelled `label`, with a copy button and the warning that it cannot be shown again. It takes focus
 * when it appears, so that a keyboard user lands on it.
 */
export function ShownOnce(props: {
  label: string
  secret: string
  onDone: () => void
  /** Why it cannot be shown again, when not because only its hash is stored (a webhook secret is kept to sign). */
  warning?: string
  children?: ComponentChildren
}) {
  const id = useId()
  const field = useRef<HTMLInputElement>(null)
  const [copied, setCopied] = useState<string>('')
  useEffect(() => {
    field.current?.focus()
    field.current?.select()
  }, [props.secret])
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret)
      setCopied('Copied to the clipboard.')
    } catch {
      // No clipboard (a browser that refuses it here): the text is selected for the admin to copy.
      field.current?.select()
      setCopied('The browser refused the clipboard: the key is selected, copy it with Ctrl+C.')
    }
  }
  return (
    <section class="shown-once" aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>{props.label}: copy it now</h2>
      <p class="warning">{props.warning ?? HASH_ONLY}</p>
      <div class="field">
        <label for={id}>{props.label}</label>
        <input id={id} ref={field} readOnly value={props.secret} class="secret" spellcheck={false} />
      </div>
      <div class="actions">
        <button type="button" onClick={() => void copy()}>
          Copy {props.label.toLowerCase()}
        </button>
        <button type="button" class="secondary" onClick={props.onDone}>
          Done
        </button>
      </div>
      <p role="status" class="status">
        {copied}
      </p>
      {props.children}
    </section>
  )
}
