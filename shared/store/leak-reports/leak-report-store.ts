/**
 * Leak reports already received, by the digest of their signed body (control-plane/leaks/wire/github-report-route.ts):
 * a report sent again — replayed by whoever captured it, or repeated — is refused and changes nothing. Claims
 * expire, so the store holds at most what arrives in their lifetime.
 */
export interface LeakReportStore {
  /** Claims `digest` for `ttlMs`: true the first time, false while an earlier claim holds (one winner at once). */
  claimReport(digest: string, ttlMs: number): Promise<boolean>
  /** Holds the claim of `digest` for `ttlMs` from now, claimed or not: the report was acted on. */
  keepReport(digest: string, ttlMs: number): Promise<void>
  /** Gives a claim back: the report could not be acted on, and the sender's retry must be. */
  releaseReport(digest: string): Promise<void>
}
