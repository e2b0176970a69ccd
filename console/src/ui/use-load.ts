import { useCallback, useEffect, useState } from 'preact/hooks'

export interface Loaded<T> {
  data: T | undefined
  error: unknown
  loading: boolean
  reload: () => void
}

/**
 * Runs `load` when `inputs` change (and on reload()), keeping its answer or its error. An answer that arrives after
 * the inputs changed again is dropped, so a slow page never overwrites a newer one.
 */
export function useLoad<T>(load: () => Promise<T>, inputs: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true })
  const [round, setRound] = useState(0)
  useEffect(() => {
    let current = true
    setState((before) => ({ ...before, loading: true }))
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error, loading: false }),
    )
    return () => {
      current = false
    }
    // The caller names what `load` depends on, as for useEffect.
  }, [...inputs, round])
  const reload = useCallback(() => setRound((n) => n + 1), [])
  return { data: state.data, error: state.error, loading: state.loading, reload }
}
