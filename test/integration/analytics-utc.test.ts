import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'

/**
 * The rollups count by UTC hour, day and month whatever the timezone the engine runs in: here India's (UTC+5:30),
 * where a plain DateTime's hour starts at :30 and its day 5.5 hours before UTC's. Set before the engine first opens
 * (chDB reads it then), in a test file of its own (each runs in a process of its own).
 */
describe("the rollups' periods in a timezone other than UTC", () => {
  let engine: ChdbEngine
  let directory = ''
  // Two days ago at 20:45 UTC, within every table's retention: the next day's 02:15 in India.
  const day = new Date(Date.now() - 2 * 86_400_000)
  const [year, month, date] = [day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate()]
  const TIME = Date.UTC(year, month, date, 20, 45)

  beforeAll(async () => {
    process.env.TZ = 'Asia/Kolkata'
    const { ChdbEngine } = await import('../../control-plane/analytics/engine/chdb-engine.js')
    const { ensureAnalyticsSchema } = await import('../../control-plane/analytics/engine/analytics-tables.js')
    directory = await mkdtemp(join(tmpdir(), 'keygate-utc-'))
    engine = new ChdbEngine(directory, { temporary: true })
    await ensureAnalyticsSchema(engine)
    expect(await engine.query('SELECT timezone() AS tz')).toEqual([{ tz: 'Asia/Kolkata' }])
    await engine.insert(
      'key_verifications_v1',
      [
        {
          request_id: 'req_utc',
          time: TIME,
          workspace_id: 'ws',
          key_space_id: 'api_utc',
          identity_id: '',
          external_id: '',
          key_id: 'key_utc',
          outcome: 'VALID',
          tags: [],
          source: 'v1.verifyKey',
          region: 'test',
          spent_credits: 0,
          latency: 0,
        },
      ],
      'utc-1',
    )
  })
  afterAll(async () => {
    await engine?.close()
  })

  it.each([
    ['minute', () => TIME],
    ['hour', () => Date.UTC(year, month, date, 20)],
    ['day', () => Date.UTC(year, month, date)],
    ['month', () => Date.UTC(year, month, 1)],
  ])('counts it in its UTC %s', async (period, start) => {
    const rows = await engine.query(
      `SELECT toUnixTimestamp(toDateTime(time, 'UTC')) * 1000 AS start, sum(count) AS n ` +
        `FROM key_verifications_per_${period}_v1 WHERE key_id = 'key_utc' GROUP BY start`,
    )
    expect(rows).toEqual([{ start: start(), n: 1 }])
  })
})
