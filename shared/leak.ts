/**
 * Leaked keys: what an api does with a key reported leaked (its policy), and the mark a reported key carries. A report
 * comes from GitHub's secret scanning (control-plane/leaks/github-report-route.ts) or from a root key
 * (keys.reportLeak), and is acted on in one place (control-plane/leaks/act-on-leak.ts).
 */

/** notify: only mark the key (and send `key.leaked`); disable: also stop it verifying; delete: also delete it. */
export const LEAK_POLICIES = ['notify', 'disable', 'delete'] as const
export type LeakPolicy = (typeof LEAK_POLICIES)[number]

/** Least surprise for a secret that is public now: it stops working, and can be re-enabled by its owner. */
export const DEFAULT_LEAK_POLICY: LeakPolicy = 'disable'

/** When and where a key was reported leaked, by whom, and what was done (KeyRecord.leaked). */
export interface LeakMark {
  /** When the report arrived, unix ms. */
  at: number
  /** Where the key was found (a commit's file on GitHub, a paste…), as the reporter said. */
  url?: string
  /** What kind of place (GitHub: `content`, `commit`, `npm`…), as the reporter said. */
  source?: string
  /** `github` for GitHub's secret scanning; `rootkey:<id>` for keys.reportLeak. */
  reporter: string
  /** The api's policy as it was applied. */
  action: LeakPolicy
}
