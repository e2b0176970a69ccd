/**
 * The one-time code a portal link carries (`/portal/?code=pst_…`). It is exchanged for the session's cookie once,
 * then taken out of the address bar, so that it stays in no bookmark, copied URL or history entry.
 */
export function linkCode(): string | undefined {
  return new URLSearchParams(window.location.search).get('code') ?? undefined
}

/** The address without the code (the rest of the query and the fragment kept), in place of the current entry. */
export function forgetLinkCode(): void {
  const url = new URL(window.location.href)
  url.searchParams.delete('code')
  window.history.replaceState(window.history.state, '', url)
}
