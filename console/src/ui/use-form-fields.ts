import { useState } from 'preact/hooks'

/** A form's text fields in one state: `field(name)` is a Field's value and onChange, reset() empties them all. */
export function useFormFields<T extends Record<string, string>>(empty: T) {
  const [values, setValues] = useState(empty)
  return {
    values,
    field: (name: keyof T) => ({
      value: values[name],
      onChange: (value: string) => setValues((before) => ({ ...before, [name]: value })),
    }),
    reset: () => setValues(empty),
  }
}
