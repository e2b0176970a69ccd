import { rm } from 'node:fs/promises'
import { Session } from 'chdb'
import type { AnalyticsEngine, EngineRow } from './analytics-engine.js'
import { compactRows, INSERT_SETTINGS, insertParts, type InsertRows } from './insert-parts.js'
import { rowsOfJsonEachRow } from './json-each-row.js'

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
  readonly database = 'default'
  private session: Session
  /** The call running, or the last: each waits for the one before it. */
  private queue: Promise<unknown> = Promise.resolve()
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
    await this.serialised(() => this.session.queryAsync(sql))
  }

  async insert(table: string, rows: InsertRows, batchId: string): Promise<void> {
    const { columns, lines } = compactRows(rows)
    const maxChars = this.options.insertPartChars ?? INSERT_PART_CHARS
    for (const { text, token } of insertParts(lines, batchId, maxChars)) {
      await this.serialised(() =>
        this.session.insert({
          table,
          values: text,
          format: 'JSONCompactEachRow',
          columns,
          settings: { ...INSERT_SETTINGS, insert_deduplication_token: token },
        }),
      )
    }
  }

  async query(sql: string, params?: Readonly<Record<string, string>>): Promise<EngineRow[]> {
    const options = { format: 'JSONEachRow' }
    const result = await this.serialised(() =>
      params === undefined ? this.session.queryAsync(sql, options) : this.session.queryBindAsync(sql, params, options),
    )
    const text = result.text()
    return rowsOfJsonEachRow(text)
  }

  /**
   * Runs one call on the session once those before it are done: chDB runs one at a time per session, and what a
   * call answers must be its own. After a call that failed, the session is checked before the next: a query that
   * failed while writing its result (a limit reached mid-answer) can leave part of that answer in the session, which
   * the next call would read as its own — another caller's rows. If a probe does not answer exactly itself, the
   * session is closed and opened again on the same directory.
   */
  private serialised<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(async () => {
      if (this.closed) throw new Error('the embedded analytics engine is closed')
      try {
        return await work()
      } catch (err) {
        await this.recover()
        throw err
      }
    })
    this.queue = run.catch(() => undefined)
    return run
  }

  private async recover(): Promise<void> {
    let answer = ''
    try {
      answer = (await this.session.queryAsync("SELECT 'keygate' AS probe", { format: 'JSONEachRow' })).text()
    } catch {
      // A session that cannot answer a probe is opened again too.
    }
    if (answer.trim() === '{"probe":"keygate"}') return
    this.session.close()
    this.session = new Session(this.directory)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    await this.queue
    this.session.close()
    openDirectory = undefined
    if (this.options.temporary === true) await rm(this.directory, { recursive: true, force: true })
  }
}
