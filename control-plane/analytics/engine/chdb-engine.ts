import { rm } from 'node:fs/promises'
import { Session } from 'chdb'
import type { AnalyticsEngine, EngineRow } from './analytics-engine.js'
import { insertParts } from './insert-parts.js'

/** Characters of one insert's text, at most: far within V8's longest string, and a few tens of MiB in memory. */
const INSERT_PART_CHARS = 64 * 1024 * 1024

/** The data directory of the one embedded engine this process has open, if any: chDB allows one per process. */
let openDirectory: string | undefined

/**
 * The ClickHouse engine in this process (chDB), its tables on disk under `directory`. Only its asynchronous calls
 * are used: the synchronous ones hold the event loop for as long as the query runs. chDB runs one query at a time per
 * session, so a slow query delays the next one; callers' queries are bounded above it.
 */
export class ChdbEngine implements AnalyticsEngine {
  readonly kind = 'embedded' as const
  private readonly session: Session
  private closed = false

  /**
   * Opens the engine on `directory` (made when missing); a second one in the same process is refused. A `temporary`
   * directory is removed when the engine closes; `insertPartChars` bounds one insert's text (insert-parts.ts).
   */
  constructor(
    readonly directory: string,
    private readonly options: { temporary?: boolean; insertPartChars?: number } = {},
  ) {
    if (openDirectory !== undefined)
      throw new Error(
        `the embedded analytics engine is open on ${openDirectory} already: chDB allows one data directory per process`,
      )
    this.session = new Session(directory)
    openDirectory = directory
  }

  async command(sql: string): Promise<void> {
    await this.session.queryAsync(sql)
  }

  async insert(table: string, rows: readonly object[], batchId: string): Promise<void> {
    for (const { text, token } of insertParts(rows, batchId, this.options.insertPartChars ?? INSERT_PART_CHARS)) {
      await this.session.insert({
        table,
        values: text,
        format: 'JSONEachRow',
        settings: {
          // chDB inserts asynchronously by default: this batch is written, with its token, before the call returns,
          // so that the buffer it came from may be acknowledged then.
          async_insert: 0,
          insert_deduplication_token: token,
          // The rollups the views feed drop the retried batch too (each keeps its own deduplication window).
          deduplicate_blocks_in_dependent_materialized_views: 1,
        },
      })
    }
  }

  async query(sql: string): Promise<EngineRow[]> {
    const text = (await this.session.queryAsync(sql, { format: 'JSONEachRow' })).text()
    return text === ''
      ? []
      : text
          .trimEnd()
          .split('\n')
          .map((line) => JSON.parse(line) as EngineRow)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.session.close()
    openDirectory = undefined
    if (this.options.temporary === true) await rm(this.directory, { recursive: true, force: true })
  }
}
