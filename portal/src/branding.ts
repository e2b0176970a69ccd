/**
 * The operator's branding of a portal, applied safely: the accent colour only as a `#rrggbb` custom property set
 * through the CSSOM (the page's CSP allows no inline style), with text colours chosen to keep 4.5:1 contrast
 * whatever the colour; the logo only from an https URL; a return link only to an http(s) page.
 */

const HEX_COLOUR = /^#[0-9a-f]{6}$/i
const WHITE = '#ffffff'
const BLACK = '#000000'
/** The page's own text colour (ui.css `--text`): links fall back to it when the accent is too light. */
const TEXT = '#1b1b1b'
const READABLE = 4.5

/** Relative luminance of a `#rrggbb` colour (WCAG 2). */
function luminance(colour: string): number {
  const channels = [1, 3, 5].map((at) => {
    const value = parseInt(colour.slice(at, at + 2), 16) / 255
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4
  })
  const [r = 0, g = 0, b = 0] = channels
  return 0.2126 * r + 0.7152 * g + 0.0722 * b
}

/** WCAG 2's contrast ratio of two `#rrggbb` colours, from 1 to 21. */
export function contrast(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number]
  return (light + 0.05) / (dark + 0.05)
}

/** The colours the page derives from an accent: the accent, text on it, and the accent as text on white. */
export function accentColours(accent: string): { accent: string; onAccent: string; accentInk: string } {
  return {
    accent,
    onAccent: contrast(accent, WHITE) >= contrast(accent, BLACK) ? WHITE : BLACK,
    accentInk: contrast(accent, WHITE) >= READABLE ? accent : TEXT,
  }
}

/** Sets the portal's accent on the page (nothing when it is absent or not a `#rrggbb` colour). */
export function applyAccent(accentColor: string | undefined): void {
  if (accentColor === undefined || !HEX_COLOUR.test(accentColor)) return
  const colours = accentColours(accentColor.toLowerCase())
  const style = document.documentElement.style
  style.setProperty('--accent', colours.accent)
  style.setProperty('--on-accent', colours.onAccent)
  style.setProperty('--accent-ink', colours.accentInk)
}

/** `url` when it is an absolute URL of one of `protocols`, else undefined. */
function urlOf(url: string | undefined, protocols: readonly string[]): string | undefined {
  if (url === undefined) return undefined
  try {
    const parsed = new URL(url)
    return protocols.includes(parsed.protocol) ? parsed.href : undefined
  } catch {
    return undefined
  }
}

/** The logo's URL when it is https (the CSP allows no other image from elsewhere), else undefined. */
export function logoUrl(url: string | undefined): string | undefined {
  return urlOf(url, ['https:'])
}

/** The return link when it leads to a web page (never `javascript:` nor `data:`), else undefined. */
export function returnUrl(url: string | undefined): string | undefined {
  return urlOf(url, ['https:', 'http:'])
}
