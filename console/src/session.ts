/**
 * The signed-in root key, kept for this tab only: sessionStorage survives a reload of the tab and dies with it.
 * Never a URL (it would reach logs and history) nor localStorage (it would outlive the tab).
 */
const SLOT = 'keygate-console.root-key'

export function savedRootKey(): string | null {
  try {
    return window.sessionStorage.getItem(SLOT)
  } catch {
    // Storage turned off: the key lives in memory only, and a reload signs out.
    return null
  }
}

export function saveRootKey(rootKey: string): void {
  try {
    window.sessionStorage.setItem(SLOT, rootKey)
  } catch {
    // As above: memory only.
  }
}

export function forgetRootKey(): void {
  try {
    window.sessionStorage.removeItem(SLOT)
  } catch {
    // Nothing was kept.
  }
}
