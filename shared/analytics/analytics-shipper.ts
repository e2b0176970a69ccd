import { randomUUID } from 'node:crypto'
import type { Logger } from 'pino'
import { Counter, type Registry } from 'prom-client'
import type { AnalyticsBufferStore } from '../store/analytics-buffer/analytics-buffer-store.js'
import type { AnalyticsRecorder } from './analytics-recorder.js'

export interface ShipperSettings {
  /** The buffer this process appends to (0 … ANALYTICS_BUFFER_SHARDS - 1). */
  shard: number
  /** How often what was recorded is handed to the buffer, ms. */
  flushMs: number
  /** The buffer's bound in bytes (analytics-buffer-store.ts, append). */
  maxBufferBytes: number
  /** Rows kept here while the buffer cannot be reached; beyond, the oldest batches are dropped (counted). */
  maxHeldRows: number
}

/**
 * Hands what the recorder recorded to the store's analytics buffer every `flushMs`, off every verification's path: a
 * batch encoded once and appended whole. While the store cannot be reached, batches are held here (up to
 * `maxHeldRows`, the oldest dropped beyond) and appended in order once it can; what the process had not handed over
 * when it dies is lost (at most `flushMs` of rows, plus what the store's outage held back).
 *
 * After each flush that left nothing held, it reports to the store that every row it recorded before the flush began
 * is in a buffer (reportThrough), idle or not: the ingest's watermark — how far every verification is in the engine —
 * is made of these reports. A process that stops having handed everything over is forgotten.
 */
export class AnalyticsShipper {
  /** This process, as its reports name it. */
  readonly process = `${randomUUID()}`
  private readonly held: { json: string; rows: number }[] = []
  private heldRows = 0
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  private readonly dropped: Counter<'reason'>
  private reportedRecorderDrops = 0

  constructor(
    private readonly buffer: Pick<AnalyticsBufferStore, 'append' | 'reportThrough' | 'forgetProcesses'>,
    private readonly recorder: AnalyticsRecorder,
    private readonly log: Logger,
    registry: Registry,
    private readonly settings: ShipperSettings,
    /**
     * The time before which every row this process records is in the recorder (Unix ms): now, on the clock rows are
     * recorded by, or earlier while a row of an earlier time is still to be recorded (a verification waiting on the
     * store).
     */
    private readonly now: () => number = Date.now,
  ) {
    this.dropped = new Counter({
      name: 'keygate_analytics_rows_dropped_total',
      help:
        'Analytics rows lost before the engine, by where: memory (the recorder was full between flushes), held ' +
        '(the store was unreachable for longer than the process could hold), buffer (trimmed to the buffer bound)',
      labelNames: ['reason'],
      registers: [registry],
    })
    // Every reason from 0: a rule on increase() then sees the first loss too.
    for (const reason of ['memory', 'held', 'buffer']) this.dropped.labels(reason).inc(0)
  }

  /**
   * Hands over (and reports) at once, then every flushMs: reported from its start, a process whose first hand-overs
   * fail holds the watermark back, where one never heard of would be passed once REPORT_LAG_MS is over.
   */
  start(): void {
    // Stopped before it started (a process stopping before its store answered): nothing to run.
    if (this.stopped) return
    const tick = () => {
      if (this.stopped) return
      this.timer = setTimeout(() => void this.flush().finally(tick), this.settings.flushMs)
      this.timer.unref()
    }
    void this.flush().finally(tick)
  }

  /**
   * Stops the timer and hands over what is recorded (call before the store closes); then, if nothing is left held, the
   * process is forgotten, so that the watermark does not wait for it.
   */
  async stop(): Promise<void> {
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    await this.flush()
    if (this.held.length === 0) {
      await this.buffer.forgetProcesses([this.process]).catch((err: unknown) => {
        this.log.warn({ err }, 'could not say this process stopped recording: the watermark waits for it a while')
      })
    }
  }

  /** Hands everything recorded so far to the buffer (tests; otherwise every flushMs). */
  async flush(): Promise<void> {
    while (this.running !== undefined) await this.running
    this.running = this.send()
    try {
      await this.running
    } finally {
      this.running = undefined
    }
  }

  private async send(): Promise<void> {
    // Every row of a time before this is in what is taken next, or held already.
    const through = this.now()
    const taken = this.recorder.take()
    if (this.recorder.dropped > this.reportedRecorderDrops) {
      this.dropped.labels('memory').inc(this.recorder.dropped - this.reportedRecorderDrops)
      this.reportedRecorderDrops = this.recorder.dropped
    }
    if (taken !== undefined) {
      this.held.push({ json: JSON.stringify(taken.batch), rows: taken.rows })
      this.heldRows += taken.rows
      while (this.heldRows > this.settings.maxHeldRows && this.held.length > 1) {
        const oldest = this.held.shift()!
        this.heldRows -= oldest.rows
        this.dropped.labels('held').inc(oldest.rows)
      }
    }
    while (this.held.length > 0) {
      const next = this.held[0]!
      let trimmed: number
      try {
        trimmed = await this.buffer.append(this.settings.shard, next.json, next.rows, this.settings.maxBufferBytes)
      } catch (err) {
        this.log.warn({ err, heldRows: this.heldRows }, 'could not hand analytics rows to the store: held, sent later')
        return
      }
      this.held.shift()
      this.heldRows -= next.rows
      if (trimmed > 0) {
        this.dropped.labels('buffer').inc(trimmed)
        this.log.warn(
          { trimmedRows: trimmed, shard: this.settings.shard },
          'analytics buffer full: its oldest rows were dropped (is the control plane ingesting?)',
        )
      }
    }
    try {
      await this.buffer.reportThrough(this.process, through, Date.now())
    } catch (err) {
      this.log.warn({ err }, 'could not report how far this process handed its rows over: reported next time')
    }
  }
}
