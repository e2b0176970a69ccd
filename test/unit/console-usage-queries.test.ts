import { describe, expect, it } from 'vitest'
import { SqlLiteralError } from '../../console/src/usage/sql-literal.js'
import { summaryOf } from '../../console/src/usage/usage-lines.js'
import { busiestKeys, usageByOutcome } from '../../console/src/usage/usage-queries.js'
import { bucketTimes } from '../../console/src/usage/usage-ranges.js'

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** 2026-03-04 10:30 UTC. */
const NOW = Date.UTC(2026, 2, 4, 10, 30)

/** The queries the console's overview and charts send, and how their rows become lines. */
describe("the console's usage queries", () => {
  it('buckets the last 24 hours by UTC hour and the last 30 days by UTC day, ending with the current one', () => {
    const hours = bucketTimes('day', NOW)
    expect(hours).toHaveLength(24)
    expect(hours.at(-1)).toBe(Date.UTC(2026, 2, 4, 10))
    expect(hours[0]).toBe(Date.UTC(2026, 2, 3, 11))
    const days = bucketTimes('month', NOW)
    expect(days).toHaveLength(30)
    expect(days.at(-1)).toBe(Date.UTC(2026, 2, 4))
    expect(days[1]! - days[0]!).toBe(DAY)
  })

  it('reads the rollup of the range from its first bucket, narrowed to one key and tag, each an escaped literal', () => {
    const { sql } = usageByOutcome('day', NOW, { scope: { kind: 'key', id: "key_1'x" }, tag: "it's \\ so" })
    expect(sql).toBe(
      'SELECT toUnixTimestamp(time) AS bucket, outcome, sum(count) AS verifications FROM key_verifications_per_hour_v1 ' +
        `WHERE time >= fromUnixTimestamp(${Date.UTC(2026, 2, 3, 11) / 1000}) AND key_id = 'key_1\\'x' ` +
        "AND has(tags, 'it\\'s \\\\ so') GROUP BY bucket, outcome ORDER BY bucket, outcome",
    )
    expect(usageByOutcome('month', NOW, { scope: { kind: 'api', id: 'api_1' } }).sql).toContain(
      `FROM key_verifications_per_day_v1 WHERE time >= toDate(fromUnixTimestamp(${Date.UTC(2026, 1, 3) / 1000}), 'UTC') AND key_space_id = 'api_1'`,
    )
    expect(usageByOutcome('day', NOW, { scope: { kind: 'identity', id: 'id_1' } }).sql).toContain(
      "identity_id = 'id_1'",
    )
    expect(() => usageByOutcome('day', NOW, { tag: 'a\nb' })).toThrow(SqlLiteralError)
    expect(() => usageByOutcome('day', NOW, { scope: { kind: 'key', id: 'key\u0000' } })).toThrow(SqlLiteralError)
  })

  it('puts every row in the bucket its time falls in, a line per outcome present, in the console order', () => {
    const query = usageByOutcome('day', NOW)
    const hour = (h: number) => Date.UTC(2026, 2, 4, h) / 1000
    const series = query.read([
      { bucket: hour(9), outcome: 'RATE_LIMITED', verifications: 2 },
      { bucket: hour(10), outcome: 'VALID', verifications: 3 },
      // An engine whose hours start at :30 (a zone half an hour off UTC): still this hour's.
      { bucket: hour(10) + 1800, outcome: 'VALID', verifications: 1 },
      { bucket: hour(10), outcome: 'SOMETHING_NEW', verifications: 1 },
      // Before the range: left out.
      { bucket: Date.UTC(2026, 2, 2) / 1000, outcome: 'EXPIRED', verifications: 7 },
    ])
    expect(series.times).toHaveLength(24)
    expect(series.outcomes.map(({ code, total }) => [code, total])).toEqual([
      ['VALID', 4],
      ['RATE_LIMITED', 2],
      ['SOMETHING_NEW', 1],
    ])
    expect(series.outcomes[0]!.counts.at(-1)).toBe(4)
    expect(series.outcomes[1]!.counts.at(-2)).toBe(2)
    expect(summaryOf('day', undefined, series)).toBe('Last 24 hours: 4 valid, 2 rate limited, 1 something_new')
    expect(summaryOf('month', 'beta', query.read([]))).toBe('Last 30 days, tagged "beta": no verifications')
    expect(summaryOf('day', undefined, undefined)).toBe('Last 24 hours: loading')
  })

  it('lists the busiest keys by their verifications, without the unknown keys counted under none', () => {
    const query = busiestKeys('month', NOW)
    expect(query.sql).toContain("AND key_id != '' GROUP BY key_id ORDER BY verifications DESC, key_id LIMIT 10")
    expect(query.read([{ key_id: 'key_1', api_id: 'api_1', verifications: 5, refused: 2 }])).toEqual([
      { keyId: 'key_1', apiId: 'api_1', verifications: 5, refused: 2 },
    ])
  })
})
