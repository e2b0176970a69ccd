import type { ComponentChildren, InputHTMLAttributes } from 'preact'
import { useId } from 'preact/hooks'

interface FieldProps {
  label: string
  value: string
  onChange: (value: string) => void
  /** Said under the field, and read with it by screen readers. */
  hint?: ComponentChildren
  /** What is wrong with the value, or undefined: the field is marked invalid and the message read with it. */
  problem?: string | undefined
  type?: 'text' | 'password' | 'number' | 'datetime-local' | 'search' | 'url'
  required?: boolean
  placeholder?: string
  autoFocus?: boolean
  multiline?: boolean
  min?: number
  max?: number
}

/** A labelled input (or textarea): the label is a real <label>, hints and problems are tied to it by id. */
export function Field(props: FieldProps) {
  const id = useId()
  const hintId = `${id}-hint`
  const problemId = `${id}-problem`
  const described = [props.hint ? hintId : '', props.problem ? problemId : ''].filter(Boolean).join(' ') || undefined
  const common = {
    id,
    value: props.value,
    required: props.required,
    placeholder: props.placeholder,
    autoFocus: props.autoFocus,
    'aria-describedby': described,
    'aria-invalid': props.problem ? true : undefined,
    onInput: (event: Event) => props.onChange((event.currentTarget as HTMLInputElement).value),
  }
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.multiline ? (
        <textarea {...common} rows={3} spellcheck={false} />
      ) : (
        <input
          {...common}
          {...inputType(props.type ?? 'text')}
          min={props.min}
          max={props.max}
          autoComplete="off"
          spellcheck={false}
        />
      )}
      {props.hint ? (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      ) : null}
      {props.problem ? (
        <small id={problemId} class="problem">
          {props.problem}
        </small>
      ) : null}
    </div>
  )
}

/**
 * Preact's types tie each input type to its attributes (a password field takes no `list`): the type chosen at run
 * time is given as the general attribute set.
 */
function inputType(type: NonNullable<FieldProps['type']>): InputHTMLAttributes<HTMLInputElement> {
  return { type } as InputHTMLAttributes<HTMLInputElement>
}

export function Checkbox(props: { label: string; checked: boolean; onChange: (checked: boolean) => void }) {
  const id = useId()
  return (
    <div class="field checkbox">
      <input
        id={id}
        type="checkbox"
        checked={props.checked}
        onChange={(event) => props.onChange(event.currentTarget.checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  )
}

export function Select<T extends string>(props: {
  label: string
  value: T
  options: readonly (readonly [T, string])[]
  onChange: (value: T) => void
}) {
  const id = useId()
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} value={props.value} onChange={(event) => props.onChange(event.currentTarget.value as T)}>
        {props.options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
    </div>
  )
}
