import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect, it } from 'vitest'
import {
  ensureAnalyticsSchema,
  KEY_VERIFICATION_ROLLUPS,
  PUBLIC_TABLES,
  RATELIMIT_ROLLUPS,
} from '../../control-plane/analytics/engine/analytics-tables.js'
import { ChdbEngine } from '../../control-plane/analytics/engine/chdb-engine.js'
import { ClickhouseServerEngine } from '../../control-plane/analytics/engine/clickhouse-server-engine.js'
import { startClickhouseServer } from '../support/clickhouse-server.js'

const VIEWS = [...KEY_VERIFICATION_ROLLUPS, ...RATELIMIT_ROLLUPS].map((rollup) => `${rollup.name}_mv`)

/**
 * Moving the embedded engine's rows to a ClickHouse server as docs/analytics.md says: the server's views detached,
 * every table copied as it is from the embedded directory (read by chDB here, as `clickhouse local` reads it) into
 * the server's through its HTTP interface (`url()`), the views attached again. Every table then counts what the
 * embedded one did, and the views feed the rollups again.
 */
it('moves every table’s rows from the embedded directory to a server, each counted once', async () => {
  const server = await startClickhouseServer()
  const target = new ClickhouseServerEngine(server.url)
  const directory = await mkdtemp(join(tmpdir(), 'keygate-move-'))
  const embedded = new ChdbEngine(directory)
  try {
    await target.ensureDatabase()
    await ensureAnalyticsSchema(target)
    await ensureAnalyticsSchema(embedded)
    const now = Date.now()
    const row = (n: number) => ({
      request_id: `vr_${n}`,
      time: now - n * 3_600_000,
      workspace_id: 'ws_keygate',
      key_space_id: 'api_one',
      identity_id: '',
      external_id: '',
      key_id: `key_${n % 3}`,
      outcome: 'VALID',
      tags: ['a'],
      source: 'v1.verifyKey',
      region: 'test',
      spent_credits: 1,
      latency: 0.1,
    })
    // A rollup's row has no request id, latency or credits of a verification: its columns only.
    const withoutRawFields = ({ request_id: _id, latency: _latency, ...rest }: ReturnType<typeof row>) => ({
      ...rest,
      spent_credits: 0,
    })
    await embedded.insert(
      'key_verifications_v1',
      Array.from({ length: 50 }, (_, n) => row(n)),
      'move-v',
    )
    // Unknown keys are counted in the rollups only: they must move too.
    await embedded.insert(
      'key_verifications_per_minute_v1',
      [
        {
          ...withoutRawFields(row(0)),
          time: Math.floor(now / 60_000) * 60,
          key_id: '',
          outcome: 'NOT_FOUND',
          count: 7,
          tags: [],
        },
      ],
      'move-n',
    )
    const decisions = Array.from({ length: 4 }, (_, n) => ({
      request_id: `rl_${n}`,
      time: now - n * 60_000,
      workspace_id: 'ws_keygate',
      namespace_id: 'rlns_one',
      identifier: 'user',
      passed: n % 2 === 0,
      limit: 2,
      remaining: 0,
      latency: 0.1,
    }))
    await embedded.insert('ratelimits_v1', decisions, 'move-r')

    for (const view of VIEWS) await target.command(`DETACH TABLE keygate.${view}`)
    for (const table of PUBLIC_TABLES) {
      const insert = encodeURIComponent(`INSERT INTO keygate.${table} FORMAT JSONEachRow`)
      await embedded.command(
        `INSERT INTO FUNCTION url('http://127.0.0.1:${server.port}/?async_insert=0&query=${insert}', 'JSONEachRow', ` +
          `headers('X-ClickHouse-User' = 'keygate', 'X-ClickHouse-Key' = '${server.password}')) ` +
          `SELECT * FROM default.${table}`,
      )
    }
    for (const view of VIEWS) await target.command(`ATTACH TABLE keygate.${view}`)

    const totals = (engine: ChdbEngine | ClickhouseServerEngine, table: string) => {
      const counted =
        table.endsWith('_v1') && !table.includes('_per_')
          ? 'count()'
          : table.startsWith('key')
            ? 'sum(count)'
            : 'sum(total)'
      return engine.query(`SELECT ${counted} AS n FROM ${table}`)
    }
    for (const table of PUBLIC_TABLES) expect(await totals(target, table), table).toEqual(await totals(embedded, table))
    expect(await totals(target, 'key_verifications_per_month_v1')).toEqual([{ n: 57 }])
    // The views feed the rollups again.
    await target.insert('key_verifications_v1', [row(100)], 'after-move')
    expect(await totals(target, 'key_verifications_per_month_v1')).toEqual([{ n: 58 }])
  } finally {
    await embedded.close()
    await target.close()
    await server.stop()
    await rm(directory, { recursive: true, force: true })
  }
}, 60_000)
