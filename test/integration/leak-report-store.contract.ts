import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import type { LeakReportStore } from '../../shared/store/leak-reports/leak-report-store.js'
import { nothingHappensFor } from '../support/nothing-happens.js'
import { waitFor } from '../support/wait-for.js'

const digest = () => randomBytes(32).toString('hex')

/** The leak-report claims' contract (shared/store/leak-reports/leak-report-store.ts), run on every store. */
export function leakReportStoreContract(reports: () => LeakReportStore): void {
  describe('leak reports', () => {
    it('claims a digest once while the claim holds', async () => {
      const d = digest()
      expect(await reports().claimReport(d, 60_000)).toBe(true)
      expect(await reports().claimReport(d, 60_000)).toBe(false)
      expect(await reports().claimReport(digest(), 60_000)).toBe(true)
    })

    it('gives one winner among claims made at once', async () => {
      const d = digest()
      const wins = await Promise.all(Array.from({ length: 8 }, () => reports().claimReport(d, 60_000)))
      expect(wins.filter(Boolean)).toHaveLength(1)
    })

    it('claims a released digest again', async () => {
      const d = digest()
      await reports().claimReport(d, 60_000)
      await reports().releaseReport(d)
      expect(await reports().claimReport(d, 60_000)).toBe(true)
    })

    it('keeps a digest claimed for as long as it is kept, claimed before or not', async () => {
      const d = digest()
      expect(await reports().claimReport(d, 30)).toBe(true)
      await reports().keepReport(d, 60_000)
      // What must not happen past the first claim's 30 ms: the digest let go.
      await nothingHappensFor(60)
      expect(await reports().claimReport(d, 60_000)).toBe(false)
      const unclaimed = digest()
      await reports().keepReport(unclaimed, 60_000)
      expect(await reports().claimReport(unclaimed, 60_000)).toBe(false)
    })

    it('claims a digest again once its claim expired', async () => {
      const d = digest()
      expect(await reports().claimReport(d, 20)).toBe(true)
      expect(await reports().claimReport(d, 20)).toBe(false)
      const again = await waitFor(() => reports().claimReport(d, 60_000), 'the claim to expire', 2_000, 10).catch(
        () => false,
      )
      expect(again).toBe(true)
    })
  })
}
