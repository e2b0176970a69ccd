/**
 * The outcomes a verification is recorded with (docs/analytics.md), in the order the console lists them, each with
 * the words it is said in and the colour it is drawn in (on white, told apart from one another). An outcome not
 * listed here (one Keygate adds later) is still shown, by its code, in OTHER_COLOUR.
 */
export const OUTCOMES = [
  { code: 'VALID', label: 'Valid', colour: '#166534' },
  { code: 'RATE_LIMITED', label: 'Rate limited', colour: '#b45309' },
  { code: 'USAGE_EXCEEDED', label: 'Usage exceeded', colour: '#b91c1c' },
  { code: 'DISABLED', label: 'Disabled', colour: '#4b5563' },
  { code: 'EXPIRED', label: 'Expired', colour: '#7c3aed' },
  { code: 'FORBIDDEN', label: 'Forbidden', colour: '#be185d' },
  { code: 'INSUFFICIENT_PERMISSIONS', label: 'Insufficient permissions', colour: '#1d4ed8' },
  { code: 'NOT_FOUND', label: 'Not found', colour: '#0e7490' },
] as const

const OTHER_COLOUR = '#111827'

export interface OutcomeLook {
  code: string
  label: string
  colour: string
}

/** How an outcome is said and drawn. */
export function outcomeLook(code: string): OutcomeLook {
  return OUTCOMES.find((outcome) => outcome.code === code) ?? { code, label: code, colour: OTHER_COLOUR }
}

/** Outcomes in the console's order: the listed ones first, any other after them by code. */
export function byOutcomeOrder(a: string, b: string): number {
  const rank = (code: string) => {
    const at = OUTCOMES.findIndex((outcome) => outcome.code === code)
    return at === -1 ? OUTCOMES.length : at
  }
  return rank(a) - rank(b) || a.localeCompare(b)
}
