import { Readable } from 'node:stream'
import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client'
import type { AnalyticsEngine, EngineRow } from './analytics-engine.js'
import { quotedName } from './analytics-tables.js'
import { compactRows, INSERT_SETTINGS, insertParts, type InsertRows } from './insert-parts.js'
import { rowsOfJsonEachRow } from './json-each-row.js'

/** Characters of one insert's body, at most: as the embedded engine's, a few tens of MiB in memory. */
const INSERT_PART_CHARS = 64 * 1024 * 1024
/** Requests open to the server at once, at most: the ingest's inserts and the callers' queries share them. */
const MAX_CONNECTIONS = 10
/**
 * How long a request may wait for a byte of the server's answer, ms: past a query's own limit (10 s, which the
 * server answers as an error of its own) and a 100,000-row insert, within what a caller waits.
 */
const REQUEST_TIMEOUT_MS = 30_000
/** How long a statement `ON CLUSTER` waits for every replica, s: within the request's timeout. */
const CLUSTER_STATEMENT_SECONDS = 20

/** Every request: its answer buffered by the server until the query ends, and 64-bit integers as JSON numbers. */
const EVERY_REQUEST: ClickHouseSettings = {
  // A failure the server meets after it began its answer (a limit reached mid-result, a replica failing a statement
  // ON CLUSTER) is then an HTTP error with its exception, not a 200 with the exception in the body.
  wait_end_of_query: 1,
  output_format_json_quote_64bit_integers: 0,
  output_format_json_quote_denormals: 0,
}

export interface ServerEngineOptions {
  /** Requests open to the server at once, at most (default MAX_CONNECTIONS). */
  maxConnections?: number
  /** How long a request may wait for the server's answer, ms (default REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number
  /** One insert's body, at most, characters (insert-parts.ts; default INSERT_PART_CHARS). */
  insertPartChars?: number
}

/**
 * A ClickHouse server (or a cluster's replica, or a load balancer in front of them) reached over its HTTP interface
 * with ClickHouse's own client, at `url`: `http(s)://user:password@host:8123/database` (the database `default` when
 * none is named). The credentials go to the client alone: nothing this engine logs or throws holds the password, and
 * `address` names the server without them. Inserts, statements and queries mean what the embedded engine's do
 * (analytics-engine.ts), over a bounded pool of connections.
 */
export class ClickhouseServerEngine implements AnalyticsEngine {
  readonly kind = 'server' as const
  readonly database: string
  /** The server and database, for logs: no credentials. */
  readonly address: string
  // Private to the language, not only to the type: a log line or JSON of this engine shows neither the client (it
  // holds the password) nor the URL.
  readonly #client: ClickHouseClient
  /** The URL without its database, for the one request made outside it (ensureDatabase). */
  readonly #outsideDatabase: string

  constructor(
    url: string,
    private readonly options: ServerEngineOptions = {},
  ) {
    const parsed = new URL(url)
    // As the client reads it: the path, undecoded, names the database.
    this.database = parsed.pathname.trim().length > 1 ? parsed.pathname.slice(1) : 'default'
    this.address = `${parsed.protocol}//${parsed.host}/${this.database}`
    this.#client = this.clientOn(url)
    parsed.pathname = '/'
    this.#outsideDatabase = parsed.toString()
  }

  private clientOn(url: string): ClickHouseClient {
    return createClient({
      url,
      max_open_connections: this.options.maxConnections ?? MAX_CONNECTIONS,
      request_timeout: this.options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS,
      clickhouse_settings: EVERY_REQUEST,
      // Its failures reach the caller, who logs them as Keygate logs (pino, structured); its own logger writes to the
      // console.
      log: { level: ClickHouseLogLevel.OFF },
    })
  }

  async command(sql: string): Promise<void> {
    await this.#client.command({
      query: sql,
      clickhouse_settings: { distributed_ddl_task_timeout: String(CLUSTER_STATEMENT_SECONDS) },
    })
  }

  async insert(table: string, rows: InsertRows, batchId: string): Promise<void> {
    const { columns, lines } = compactRows(rows)
    const maxChars = this.options.insertPartChars ?? INSERT_PART_CHARS
    for (const { text, token } of insertParts(lines, batchId, maxChars)) {
      const { stream } = await this.#client.exec({
        query: `INSERT INTO ${quotedName(table)} (${columns.map(quotedName).join(', ')}) FORMAT JSONCompactEachRow`,
        values: Readable.from([text], { objectMode: false }),
        clickhouse_settings: { ...INSERT_SETTINGS, insert_deduplication_token: token },
      })
      await textOf(stream)
    }
  }

  async query(sql: string, params?: Readonly<Record<string, string>>): Promise<EngineRow[]> {
    // The format as a default, not a FORMAT clause appended to the statement: after EXPLAIN's statement, a FORMAT
    // clause would be read as the explained query's own.
    const { stream } = await this.#client.exec({
      query: sql,
      ...(params === undefined ? {} : { query_params: params }),
      clickhouse_settings: { default_format: 'JSONEachRow' },
    })
    const text = await textOf(stream)
    return rowsOfJsonEachRow(text)
  }

  /**
   * Makes the database when the server has none of its name (on every replica of `cluster`, when given): only then
   * does its user need the right to. Asked in the database itself, which a server refuses when it is missing; made
   * from `default`, as no request can be made in a database that does not exist.
   */
  async ensureDatabase(cluster?: string): Promise<void> {
    try {
      await this.#client.command({ query: 'SELECT 1' })
      return
    } catch (err) {
      if ((err as { code?: unknown }).code !== UNKNOWN_DATABASE) throw err
    }
    const client = this.clientOn(this.#outsideDatabase)
    try {
      await client.command({
        query:
          `CREATE DATABASE IF NOT EXISTS ${quotedName(this.database)}` +
          (cluster === undefined ? '' : ` ON CLUSTER ${quotedName(cluster)}`),
        clickhouse_settings: { distributed_ddl_task_timeout: String(CLUSTER_STATEMENT_SECONDS) },
      })
    } finally {
      await client.close()
    }
  }

  async close(): Promise<void> {
    await this.#client.close()
  }
}

/** ClickHouse's code for a database that does not exist, as the client gives it. */
const UNKNOWN_DATABASE = '81'

/** The whole of an answer's body, as text. */
async function textOf(stream: Readable): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
