import type { PortalKey } from './types.js'

/** How the page names a key in words: its name, or its first characters when it has none. */
export function keyLabel(key: PortalKey): string {
  return key.name ?? `${key.start}…`
}
