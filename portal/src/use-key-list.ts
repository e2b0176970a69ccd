import { useCallback, useEffect, useRef, useState } from 'preact/hooks'
import type { PortalApi } from './portal-api.js'
import type { PortalKey } from './types.js'

const PAGE = 50

export interface KeyList {
  /** The keys loaded so far (undefined until the first page came, or when the session may not read keys). */
  keys: PortalKey[] | undefined
  hasMore: boolean
  loading: boolean
  /** Loads the first page again, in place of what was loaded. */
  reload: () => Promise<void>
  /** Loads the next page, after what was loaded. */
  more: () => Promise<void>
  /** Drops a key from the list at once (it was revoked), before the next reload. */
  drop: (keyId: string) => void
}

/**
 * The session's keys (portal.listKeys), page after page. A page that answers after a newer load started is dropped,
 * so that a slow first page never overwrites a reload. Failed loads go to `fail`.
 */
export function useKeyList(api: PortalApi, enabled: boolean, fail: (err: unknown) => void): KeyList {
  const [keys, setKeys] = useState<PortalKey[]>()
  const [cursor, setCursor] = useState<string>()
  const [hasMore, setHasMore] = useState(false)
  const [loading, setLoading] = useState(enabled)
  const round = useRef(0)
  const load = useCallback(
    async (after: string | undefined) => {
      const mine = ++round.current
      setLoading(true)
      try {
        const answer = await api.call('listKeys', { limit: PAGE, ...(after ? { cursor: after } : {}) })
        if (mine !== round.current) return
        setKeys((before) => (after ? [...(before ?? []), ...answer.data] : answer.data))
        setCursor(answer.pagination?.cursor)
        setHasMore(answer.pagination?.hasMore ?? false)
      } catch (err) {
        if (mine === round.current) fail(err)
      } finally {
        if (mine === round.current) setLoading(false)
      }
    },
    [api, fail],
  )
  useEffect(() => {
    if (enabled) void load(undefined)
  }, [enabled, load])
  return {
    keys,
    hasMore,
    loading,
    reload: () => load(undefined),
    more: () => load(cursor),
    drop: (keyId) => setKeys((before) => before?.filter((key) => key.keyId !== keyId)),
  }
}
