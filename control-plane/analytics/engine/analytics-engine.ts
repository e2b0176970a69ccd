import type { InsertRows } from './insert-parts.js'

/** A row as the engine answers it (JSONEachRow): column name → value. */
export type EngineRow = Record<string, unknown>

/**
 * The analytics engine: ClickHouse, embedded in the process (chdb-engine.ts) or a server reached over its HTTP
 * interface (clickhouse-server-engine.ts), speaking the same SQL over the same tables (analytics-tables.ts). Narrow on
 * purpose: statements, inserts that count once, and reads; what may be asked of it, and by whom, is decided above it.
 *
 * A call that fails rejects with ClickHouse's exception when ClickHouse answered one (its code as the embedded engine
 * or the server's client gives it: query/engine-errors.ts reads both), else with an error of no code (the server could
 * not be reached or did not answer in time, or the engine is closed). No error says the server's password.
 */
export interface AnalyticsEngine {
  /** Which engine it is, for the logs and /v1/liveness: `embedded` or `server`. */
  readonly kind: 'embedded' | 'server'
  /** The database its tables are in, where unqualified names are read (EXPLAIN names a table `database.table`). */
  readonly database: string
  /** Runs a statement that answers nothing (CREATE, ALTER, OPTIMIZE). */
  command(sql: string): Promise<void>
  /**
   * Inserts `rows` into `table` (objects, or compact rows: insert-parts.ts) synchronously, once: the same batch sent
   * again with the same `batchId` (a retry after an unknown outcome) is dropped, in the table and in every rollup its
   * views feed, so that every table holds each row once. A batch must be sent again exactly as it was first (same
   * rows, same order) to be recognised.
   */
  insert(table: string, rows: InsertRows, batchId: string): Promise<void>
  /**
   * The rows a statement answers, each an object (64-bit integers as numbers; NaN and infinities as null). `params`
   * fill its `{name:Type}` placeholders, sent apart from the SQL: a caller's text is never spliced into a statement.
   */
  query(sql: string, params?: Readonly<Record<string, string>>): Promise<EngineRow[]>
  /** Ends the engine: the embedded one closes its data directory (one per process). */
  close(): Promise<void>
}
