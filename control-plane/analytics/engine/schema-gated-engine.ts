import type { Logger } from 'pino'
import type { AnalyticsEngine, EngineRow } from './analytics-engine.js'
import type { InsertRows } from './insert-parts.js'

/** The first wait after a failed attempt, and the longest, ms: each wait is twice the one before. */
const FIRST_RETRY_MS = 1_000
const LAST_RETRY_MS = 30_000

/**
 * An engine whose tables are made in the background: `prepare` (its database and tables) runs at `start`, and again
 * after each failure, until it succeeds. Until then every call is refused with an error of no ClickHouse code, as an
 * unreachable server's are: analytics queries answer 503, and the ingest leaves its batches in the store and tries
 * again. So a control plane whose ClickHouse server is down, or whose cluster has a replica down while its tables are
 * first made, starts and serves everything else.
 */
export class SchemaGatedEngine implements AnalyticsEngine {
  readonly kind: AnalyticsEngine['kind']
  readonly database: string
  private made = false
  private closed = false
  private timer: NodeJS.Timeout | undefined
  private readonly ready: Promise<void>
  private markReady: () => void = () => undefined

  constructor(
    private readonly engine: AnalyticsEngine,
    private readonly prepare: () => Promise<void>,
    private readonly log: Logger,
  ) {
    this.kind = engine.kind
    this.database = engine.database
    this.ready = new Promise((resolve) => (this.markReady = resolve))
  }

  /** Starts making the tables; answers once they are made (never, if the engine closes first). */
  start(): Promise<void> {
    this.tryPrepare(FIRST_RETRY_MS)
    return this.ready
  }

  private tryPrepare(nextWaitMs: number): void {
    if (this.closed) return
    void this.prepare().then(
      () => {
        this.made = true
        this.log.info('the analytics tables are made: analytics are served')
        this.markReady()
      },
      (err: unknown) => {
        if (this.closed) return
        this.log.warn(
          { err, retryInMs: nextWaitMs },
          'the analytics tables could not be made yet (analytics calls answer 503 until they are): trying again',
        )
        this.timer = setTimeout(() => this.tryPrepare(Math.min(nextWaitMs * 2, LAST_RETRY_MS)), nextWaitMs)
        this.timer.unref()
      },
    )
  }

  private check(): void {
    if (!this.made) throw new Error('the analytics tables are not made yet: the engine could not be reached')
  }

  async command(sql: string): Promise<void> {
    this.check()
    return this.engine.command(sql)
  }

  async insert(table: string, rows: InsertRows, batchId: string): Promise<void> {
    this.check()
    return this.engine.insert(table, rows, batchId)
  }

  async query(sql: string, params?: Readonly<Record<string, string>>): Promise<EngineRow[]> {
    this.check()
    return this.engine.query(sql, params)
  }

  /** Stops trying, and closes the engine: an attempt under way fails with it (not awaited: it may be waiting). */
  async close(): Promise<void> {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    await this.engine.close()
  }
}
