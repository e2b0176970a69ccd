import type { Logger } from 'pino'
import { Counter, Gauge, type Registry } from 'prom-client'
import {
  appendVerificationLines,
  notFoundCounts,
  ratelimitRows,
  readBatch,
  VERIFICATION_COLUMNS,
  type EncodedBatch,
  type NotFoundCount,
  type RatelimitRow,
} from '../../../shared/analytics/analytics-batch.js'
import {
  ANALYTICS_BUFFER_SHARDS,
  type AnalyticsBufferStore,
  type BufferedBatch,
  type BufferProgress,
  type ThroughReport,
} from '../../../shared/store/analytics-buffer/analytics-buffer-store.js'
import { StoreUnavailableError } from '../../../shared/errors/errors.js'
import { WORKSPACE_ID } from '../../workspace.js'
import type { AnalyticsEngine } from '../engine/analytics-engine.js'
import { KEY_VERIFICATIONS, KEY_VERIFICATION_ROLLUPS, RATELIMITS } from '../engine/analytics-tables.js'
import { LRUCache } from 'lru-cache'

/** The lease that makes one control plane at a time the ingester; another takes over this long after it dies. */
export const INGEST_LEASE = 'ingest'
export const INGEST_LEASE_MS = 10_000
/** Batches taken from one buffer per insert, at most. */
const BATCHES_PER_INSERT = 100
/**
 * Rows taken per insert, at most (a batch holding more is taken alone): what one insert holds in memory, and within the
 * longest string the engine's insert is written as. By batches alone, 100 batches of a verifier answering 10,000 calls
 * a second are 2,000,000 rows, past that length: such a set, once taken, would fail every time it is tried again.
 */
const ROWS_PER_INSERT = 100_000
/**
 * Buffers ingested at once: two, so that reading and writing one buffer's batches (JavaScript, on the event loop)
 * overlaps the engine's insert of another's (on the engine's threads), which alone left a core idle for a third of
 * the ingest. The engine still runs one insert at a time.
 */
const SHARDS_AT_ONCE = 2
/** How soon the next pass runs after one that found rows, ms. */
const BUSY_EVERY_MS = 1_000
/**
 * After passes that found nothing, the next waits twice as long as the one before, from IDLE_FIRST_MS to IDLE_MOST_MS:
 * a pass looks at every buffer (a few commands each), and an idle control plane must cost Redis little (the idle
 * budget, idle-control-plane.test.ts). Rows appended after an idle spell are ingested within IDLE_MOST_MS.
 */
const IDLE_FIRST_MS = 4_000
const IDLE_MOST_MS = 16_000

/** The mark the ingest's watermark is kept under (AnalyticsBufferStore.raiseMark). */
export const WATERMARK = 'watermark'
/**
 * A recording process whose last report is older than this (by the wall clock) is taken as gone: killed, or cut off
 * from the store for so long that what it holds is late. The watermark then moves on without it.
 */
export const GONE_AFTER_MS = 10 * 60_000
/**
 * How far the watermark stays behind a pass, at least: a process that has just started may record before its first
 * report (made as it starts, analytics-shipper.ts) reaches the store.
 */
export const REPORT_LAG_MS = 10_000

/** What one pass did with a buffer: found nothing, ingested rows, or stopped as another took the lease over. */
type ShardOutcome = 'nothing' | 'rows' | 'lease lost'

export interface IngestDeps {
  buffer: AnalyticsBufferStore
  engine: AnalyticsEngine
  log: Logger
  registry: Registry
  /** Who this process is, for the lease. */
  holder: string
  /** The id of the rate-limit namespace named so, if it has a record (rows carry the name the call gave). */
  namespaceIdOf: (name: string) => Promise<string | undefined>
  /**
   * The embedded engine: this control plane's alone. Whether it ingests is decided by its first pass, once: if another
   * holds the lease then, this one never ingests (its engine would hold other numbers than the holder's) and
   * `onRefused` is told. A server engine is shared: any control plane may take the lease over at any time.
   */
  exclusive?: { onRefused: () => void }
  /** Rows taken per insert, at most (default ROWS_PER_INSERT). */
  rowsPerInsert?: number
  /**
   * Moves the counters kept in the store before analytics into the engine (move-usage-counters.ts), asking
   * `stillHeld` before each page; answers how many, or undefined if it stopped as the lease was lost. Run by the lease
   * holder after a pass that ingested every buffer (the move reads from the engine when verifiers began recording),
   * until it has finished once.
   */
  moveCounters?: (stillHeld: () => Promise<boolean>) => Promise<number | undefined>
  /** The clock rows are recorded by, Unix ms (default Date.now). */
  now?: () => number
  /**
   * Told the watermark after each pass that ingested every buffer (usage events: usage-events.ts). Its failure is
   * logged; the next pass tells it again.
   */
  afterPass?: (watermark: number) => Promise<void>
}

/**
 * Moves the processes' analytics batches from the store's buffers into the engine, at least once and counted once.
 * For each buffer: take up to BATCHES_PER_INSERT batches and mark them pending in the store, insert their rows under a
 * token made of the buffer and the batches' ids, then complete them (which removes them). A pass that dies between the
 * insert and the completion (this process, the engine's answer, the store) finds the same batches pending next time
 * and inserts them again, whole and in the same order, under the same token: the engine drops the repeat in the raw
 * table and in every rollup (analytics-engine.ts, insert). One control plane at a time ingests (a lease in the store).
 */
export class AnalyticsIngest {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<boolean> | undefined
  private stopped = true
  /** Exclusive only: whether the first pass took the lease (undefined until it ran). */
  private claimed: boolean | undefined
  private readonly rows: Counter<'table'>
  private readonly refusedBatches: Counter
  private readonly bufferBytes: Gauge
  private readonly trimmedRows: Gauge
  private readonly watermark: Gauge
  private readonly namespaceIds = new LRUCache<string, string>({ max: 10_000, ttl: 600_000 })

  constructor(private readonly deps: IngestDeps) {
    this.rows = new Counter({
      name: 'keygate_analytics_rows_ingested_total',
      help: 'Analytics rows inserted into the engine, by table (a retried batch counts again here, once in the engine)',
      labelNames: ['table'],
      registers: [deps.registry],
    })
    this.refusedBatches = new Counter({
      name: 'keygate_analytics_batches_refused_total',
      help: 'Buffered analytics batches that could not be read (a newer format, damage) and were skipped',
      registers: [deps.registry],
    })
    this.bufferBytes = new Gauge({
      name: 'keygate_analytics_buffer_bytes',
      help: 'Bytes of analytics batches waiting in the store, over every buffer, as of the last pass',
      registers: [deps.registry],
    })
    this.watermark = new Gauge({
      name: 'keygate_analytics_watermark_seconds',
      help: 'Unix time before which every verification is in the analytics engine, as of the last pass (usage events wait for it)',
      registers: [deps.registry],
    })
    this.trimmedRows = new Gauge({
      name: 'keygate_analytics_buffer_trimmed_rows',
      help: 'Rows the store trimmed from full analytics buffers, ever (alert on any increase): never ingested',
      registers: [deps.registry],
    })
  }

  /** Exclusive only: whether another control plane held the lease at this one's first pass (it never ingests then). */
  get refused(): boolean {
    return this.claimed === false
  }

  start(): void {
    this.stopped = false
    this.schedule(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.running?.catch(() => undefined)
    await this.deps.buffer.releaseLease(INGEST_LEASE, this.deps.holder).catch(() => undefined)
  }

  /** One pass over every buffer now, if this process holds the lease (tests; otherwise every second or two). */
  async ingestNow(): Promise<boolean> {
    while (this.running !== undefined) await this.running.catch(() => undefined)
    this.running = this.pass()
    try {
      return await this.running
    } finally {
      this.running = undefined
    }
  }

  /** How long to wait after a pass that found nothing: twice the last such wait, at most IDLE_MOST_MS. */
  private idle(): number {
    const wait = this.idleWait
    this.idleWait = Math.min(wait * 2, IDLE_MOST_MS)
    return wait
  }

  private idleWait = IDLE_FIRST_MS

  private schedule(ms: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => {
      this.ingestNow().then(
        (found) => {
          if (found) this.idleWait = IDLE_FIRST_MS
          this.schedule(found ? BUSY_EVERY_MS : this.idle())
        },
        (err: unknown) => {
          this.deps.log.warn({ err }, 'analytics ingest failed: the batches stay buffered and are tried again')
          this.schedule(IDLE_FIRST_MS)
        },
      )
    }, ms)
    this.timer.unref()
  }

  private countersMoved = false

  private async moveCounters(move: NonNullable<IngestDeps['moveCounters']>): Promise<void> {
    try {
      const moved = await move(() => this.deps.buffer.holdLease(INGEST_LEASE, this.deps.holder, INGEST_LEASE_MS))
      // Stopped as another took the lease over: the holder moves the rest.
      if (moved === undefined) return
      this.countersMoved = true
      if (moved > 0) this.deps.log.info({ moved }, 'moved the verification counters kept in the store into analytics')
    } catch (err) {
      // Tried again after the next pass: the buffers are ingested meanwhile.
      this.deps.log.warn({ err }, 'could not move the verification counters kept in the store into analytics yet')
    }
  }

  /** Stops this exclusive ingest for good, and says so. */
  private refuse(): void {
    this.stopped = true
    this.deps.exclusive?.onRefused()
  }

  /** Ingests what every buffer holds; answers whether it found any rows. */
  private async pass(): Promise<boolean> {
    if (this.claimed === false) return false
    const held = await this.deps.buffer.holdLease(INGEST_LEASE, this.deps.holder, INGEST_LEASE_MS)
    if (this.deps.exclusive !== undefined && (this.claimed === undefined || !held)) {
      // Refused at the first pass, or lost since (another took it over while this one could not renew it): an
      // embedded engine that another control plane ingests for would answer other numbers from then on.
      this.claimed = held
      if (!held) this.refuse()
    }
    if (!held) return false
    // Read before the buffers: every process's rows before what it reported are then in a buffer this pass drains.
    const startedAt = (this.deps.now ?? Date.now)()
    const reports = await this.deps.buffer.readReports()
    let found = false
    let bytes = 0
    let trimmed = 0
    let leaseLost = false
    const failures: unknown[] = []
    let unreachable: StoreUnavailableError | undefined
    let next = 0
    // Buffers are ingested SHARDS_AT_ONCE at a time, each by one worker in order: while the engine inserts one
    // buffer's rows (on its own threads), the event loop reads and writes the next one's.
    const worker = async () => {
      while (next < ANALYTICS_BUFFER_SHARDS && !leaseLost && unreachable === undefined) {
        const shard = next++
        let ingested: ShardOutcome
        try {
          ingested = await this.ingestShard(shard, (look) => {
            bytes += look.bytes
            trimmed += look.trimmedRows
          })
        } catch (err) {
          // The store unreachable: so is every other buffer. Else what failed is this buffer's (rows the engine
          // refuses, say), retried next pass: the others are ingested meanwhile.
          if (err instanceof StoreUnavailableError) unreachable ??= err
          else failures.push(err)
          continue
        }
        found ||= ingested !== 'nothing'
        if (ingested === 'lease lost') leaseLost = true
      }
    }
    await Promise.all(Array.from({ length: SHARDS_AT_ONCE }, worker))
    if (unreachable !== undefined) throw unreachable
    if (leaseLost) {
      this.deps.log.warn({ holder: this.deps.holder }, 'another control plane took the analytics ingest over')
      if (this.deps.exclusive !== undefined) {
        this.claimed = false
        this.refuse()
      }
      return found
    }
    this.bufferBytes.set(bytes)
    this.trimmedRows.set(trimmed)
    if (failures.length === 0) await this.advanceWatermark(startedAt, reports)
    // Once every buffer is in the engine: the rows verifiers recorded say which hours the counters still hold alone.
    if (failures.length === 0 && !this.countersMoved && this.deps.moveCounters !== undefined)
      await this.moveCounters(this.deps.moveCounters)
    if (failures.length === 1) throw failures[0]
    if (failures.length > 1) throw new AggregateError(failures, `${failures.length} analytics buffers failed to ingest`)
    return found
  }

  /**
   * After a pass that drained every buffer: every row each process recorded before its report (read before the
   * buffers) is in the engine, so the watermark — the time before which every verification is in the engine — is the
   * earliest of those reports, and at most REPORT_LAG_MS before the pass began. Processes gone (GONE_AFTER_MS) are
   * forgotten and no longer hold it back.
   */
  private async advanceWatermark(startedAt: number, reports: ReadonlyMap<string, ThroughReport>): Promise<void> {
    const wallNow = Date.now()
    const gone = [...reports].filter(([, report]) => wallNow - report.at > GONE_AFTER_MS).map(([process]) => process)
    let watermark = startedAt - REPORT_LAG_MS
    for (const [process, { through }] of reports) if (!gone.includes(process)) watermark = Math.min(watermark, through)
    await this.deps.buffer.forgetProcesses(gone)
    await this.deps.buffer.raiseMark(WATERMARK, watermark)
    this.watermark.set(watermark / 1000)
    if (this.deps.afterPass === undefined) return
    try {
      await this.deps.afterPass(watermark)
    } catch (err) {
      this.deps.log.warn({ err, watermark }, 'usage events failed after an ingest pass: tried again after the next')
    }
  }

  /**
   * Ingests buffer `shard` until it is empty, or until this process no longer holds the lease; answers whether it
   * found rows. `counted` is told the buffer's progress as of its last look (less what that look's insert removed, if
   * it completed): what the buffer still holds, failed or not.
   */
  private async ingestShard(shard: number, counted: (progress: BufferProgress) => void): Promise<ShardOutcome> {
    let found = false
    let progress: BufferProgress | undefined
    try {
      for (;;) {
        const look = await this.deps.buffer.look(shard, BATCHES_PER_INSERT)
        progress = look
        if (look.batches.length === 0) {
          // Pending batches all trimmed away before they were inserted again: nothing is left to insert.
          if (look.pending !== undefined) await this.deps.buffer.complete(shard, look.pending.last)
          return found ? 'rows' : 'nothing'
        }
        // Held again before each insert: a pass draining a backlog may outlast the lease, and another control plane
        // taking it over meanwhile would take the same batches under other tokens (a server engine would count them
        // twice; an embedded one would hold part of them).
        if (!(await this.deps.buffer.holdLease(INGEST_LEASE, this.deps.holder, INGEST_LEASE_MS))) return 'lease lost'
        found = true
        // Taken already: exactly those again. Else as many as one insert holds.
        const batches =
          look.pending === undefined
            ? withinRows(look.batches, this.deps.rowsPerInsert ?? ROWS_PER_INSERT)
            : look.batches
        const first = look.pending?.first ?? batches[0]!.id
        const last = look.pending?.last ?? batches.at(-1)!.id
        if (look.pending === undefined) await this.deps.buffer.take(shard, first, last)
        await this.insert(shard, first, last, batches)
        await this.deps.buffer.complete(shard, last)
        const removed = batches.reduce((sum, batch) => sum + Buffer.byteLength(batch.batch), 0)
        progress = { ...look, bytes: Math.max(0, look.bytes - removed) }
        const drained =
          look.pending === undefined && batches.length === look.batches.length && batches.length < BATCHES_PER_INSERT
        if (drained) return 'rows'
      }
    } finally {
      if (progress !== undefined) counted(progress)
    }
  }

  /** Inserts the rows of batches `first`…`last` of buffer `shard`, under tokens made of those. */
  private async insert(shard: number, first: string, last: string, batches: BufferedBatch[]): Promise<void> {
    // Verification rows are written as the insert's lines straight from each batch; the few others as objects.
    const verifications: string[] = []
    const notFound: NotFoundCount[] = []
    const ratelimits: RatelimitRow[] = []
    for (const { id, batch } of batches) {
      const idPrefix = `vr_${shard}_${id}`
      try {
        const read = readBatch(JSON.parse(batch) as EncodedBatch)
        const counted = notFoundCounts(read, WORKSPACE_ID)
        const decided = ratelimitRows(read, idPrefix, WORKSPACE_ID)
        appendVerificationLines(read, idPrefix, WORKSPACE_ID, verifications)
        for (const row of counted) notFound.push(row)
        for (const row of decided) ratelimits.push(row)
      } catch (err) {
        this.refusedBatches.inc()
        this.deps.log.error({ err, shard, batchId: id }, 'an analytics batch could not be read: skipped')
      }
    }
    const token = `ab${shard}:${first}:${last}`
    if (verifications.length > 0) {
      const rows = { columns: VERIFICATION_COLUMNS, lines: verifications }
      await this.deps.engine.insert(KEY_VERIFICATIONS.name, rows, `${token}:v`)
      this.rows.labels(KEY_VERIFICATIONS.name).inc(verifications.length)
    }
    if (notFound.length > 0) {
      // Unknown keys are counted, not rows: they enter at the minute rollup, which feeds the coarser ones.
      const perMinute = KEY_VERIFICATION_ROLLUPS[0]!.name
      await this.deps.engine.insert(perMinute, notFound, `${token}:n`)
      this.rows.labels(perMinute).inc(notFound.length)
    }
    if (ratelimits.length > 0) {
      const rows = await this.withNamespaceIds(ratelimits)
      await this.deps.engine.insert(RATELIMITS.name, rows, `${token}:r`)
      this.rows.labels(RATELIMITS.name).inc(rows.length)
    }
  }

  /**
   * The rows as `ratelimits_v1` takes them: each namespace named by its id ('' for one without a record: used only
   * through verifiers and never made). An id found is kept: a namespace's id never changes while it exists.
   */
  private async withNamespaceIds(rows: RatelimitRow[]): Promise<object[]> {
    const ids = new Map<string, string>()
    for (const { namespace_name: name } of rows) {
      if (ids.has(name)) continue
      const known = this.namespaceIds.get(name)
      const id = known ?? (await this.deps.namespaceIdOf(name))
      if (id !== undefined && known === undefined) this.namespaceIds.set(name, id)
      ids.set(name, id ?? '')
    }
    return rows.map(({ namespace_name: name, ...row }) => ({ ...row, namespace_id: ids.get(name)! }))
  }
}

/** The first batches whose rows add up to at most `maxRows`, and at least the first batch. */
function withinRows(batches: BufferedBatch[], maxRows: number): BufferedBatch[] {
  let rows = batches[0]!.rows
  let end = 1
  while (end < batches.length && rows + batches[end]!.rows <= maxRows) rows += batches[end++]!.rows
  return batches.slice(0, end)
}
