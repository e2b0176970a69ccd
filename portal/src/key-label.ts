import type { PortalKey } from './types.js'

/**
 * How the page names a key in words (buttons, dialogs, the usage picker): its name and first characters, which tell
 * apart a rolled key and its successor (they share the name), or its first characters alone.
 */
export function keyLabel(key: PortalKey): string {
  return key.name === undefined ? `${key.start}…` : `${key.name} (${key.start}…)`
}
