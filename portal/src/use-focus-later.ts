import type { RefObject } from 'preact'
import { useCallback, useEffect, useRef, useState } from 'preact/hooks'

/**
 * focusLater(target) moves focus to `target` once the page has rendered what the current change does: a closing
 * modal dialog keeps everything behind it inert until it is gone, and gives focus back to its opener as it goes.
 */
export function useFocusLater(): (target: RefObject<HTMLElement | null>) => void {
  const pending = useRef<RefObject<HTMLElement | null>>(undefined)
  const [round, setRound] = useState(0)
  useEffect(() => {
    pending.current?.current?.focus()
    pending.current = undefined
  }, [round])
  return useCallback((target) => {
    pending.current = target
    setRound((n) => n + 1)
  }, [])
}
