import { describe, expect, it } from 'vitest'
import {
  analyticsSchema,
  KEY_VERIFICATION_ROLLUPS,
  PUBLIC_TABLES,
  RATELIMIT_ROLLUPS,
} from '../../control-plane/analytics/engine/analytics-tables.js'

const ROLLUPS = [...KEY_VERIFICATION_ROLLUPS, ...RATELIMIT_ROLLUPS]
const VIEWS = ROLLUPS.map((rollup) => `${rollup.name}_mv`)

/**
 * The statements that make the analytics tables, on one server and on a cluster. Only the one-server form runs here
 * (analytics-engine.contract.ts runs it on both engines, and has ClickHouse's parser read the cluster form): a
 * cluster's Replicated tables need Keeper and replicas.
 */
describe('the analytics schema', () => {
  const single = analyticsSchema()
  const cluster = analyticsSchema({ cluster: 'keygate', database: 'analytics' })

  it('makes the same tables and views in both forms, each once, a view after the tables it reads and feeds', () => {
    for (const statements of [single, cluster]) {
      const names = statements.map((statement) => statement.name)
      expect(new Set(names).size).toBe(names.length)
      expect([...names].sort()).toEqual([...PUBLIC_TABLES, ...VIEWS].sort())
      for (const rollup of ROLLUPS) {
        const view = names.indexOf(`${rollup.name}_mv`)
        expect(view).toBeGreaterThan(names.indexOf(rollup.name))
        expect(view).toBeGreaterThan(names.indexOf(rollup.from))
      }
    }
  })

  it('does nothing for what exists, in both forms', () => {
    for (const { sql } of [...single, ...cluster])
      expect(sql).toMatch(/^CREATE (TABLE|MATERIALIZED VIEW) IF NOT EXISTS /)
  })

  it('on one server: MergeTree tables with their own deduplication window, names unqualified', () => {
    for (const { name, sql } of single) {
      expect(sql).not.toMatch(/ON CLUSTER|Replicated| replicated_deduplication_window/)
      expect(sql).toContain(`EXISTS \`${name}\` `)
      if (!name.endsWith('_mv')) {
        expect(sql).toMatch(/ENGINE = (Aggregating)?MergeTree /)
        expect(sql).toContain('SETTINGS non_replicated_deduplication_window = 10000')
      }
    }
  })

  it('on a cluster: every statement on every replica, Replicated tables, qualified names, no Distributed table', () => {
    for (const { name, sql } of cluster) {
      expect(sql).toContain(`EXISTS \`analytics\`.\`${name}\` ON CLUSTER \`keygate\` `)
      expect(sql).not.toMatch(/Distributed|non_replicated/)
      if (name.endsWith('_mv')) {
        // The view reads and feeds the tables of the statement's database, whatever a replica's default is.
        const rollup = ROLLUPS.find((r) => `${r.name}_mv` === name)!
        expect(sql).toContain(` TO \`analytics\`.\`${rollup.name}\` AS SELECT `)
        expect(sql).toContain(` FROM \`analytics\`.\`${rollup.from}\` GROUP BY `)
      } else {
        // No arguments: the servers' default_replica_path and default_replica_name place the replicas.
        expect(sql).toMatch(/ENGINE = Replicated(Aggregating)?MergeTree ORDER BY /)
        expect(sql).toContain('SETTINGS replicated_deduplication_window = 10000')
      }
    }
  })

  it('keeps the columns, sort keys and retention of the one-server form on a cluster', () => {
    const shape = (sql: string) =>
      sql
        .replace(/`analytics`\./g, '')
        .replace(/ ON CLUSTER `keygate`/, '')
        .replace('ENGINE = Replicated', 'ENGINE = ')
        .replace('replicated_deduplication_window', 'non_replicated_deduplication_window')
    expect(cluster.map(({ sql }) => shape(sql))).toEqual(single.map(({ sql }) => sql))
  })

  it('quotes a cluster or database name whatever it holds', () => {
    const [first] = analyticsSchema({ cluster: 'a`b', database: 'c\\d' })
    expect(first!.sql).toContain('`c\\\\d`.`key_verifications_v1` ON CLUSTER `a\\`b`')
  })
})
