/**
 * Leaked keys: what an api does with a key reported leaked (its policy), and the mark a reported key carries. A report
 * comes from GitHub's secret scanning (control-plane/leaks/wire/github-report-route.ts) or from a root key
 * (keys.reportLeak), and is acted on in one place (control-plane/leaks/act-on-leak.ts).
 */
import type { LeakPolicy } from './ui-shapes.js'

export { LEAK_POLICIES, type LeakMark, type LeakPolicy } from './ui-shapes.js'

/** Least surprise for a secret that is public now: it stops working, and can be re-enabled by its owner. */
export const DEFAULT_LEAK_POLICY: LeakPolicy = 'disable'
